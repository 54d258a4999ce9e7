// The resource.k8s.io/v1 objects the gateway reads (ResourceSlice, ResourceClaim, DeviceTaintRule),
// in their JSON wire form as the API server sends them on a list or a watch — their one definition is
// @plugboard/k8s-api. sources/kube.ts reads them raw (not through @kubernetes/client-node's models,
// which rename fields such as `int`), so list and watch objects have one shape.
import type { DeviceClass, DeviceTaintRule, ResourceClaim, ResourceSlice } from '@plugboard/k8s-api';

/** The DRA objects the Kubernetes source hands the model (each list keeps unchanged objects). */
export interface DraKubeInput {
  /** This node's ResourceSlices (`spec.nodeName`). */
  slices: readonly ResourceSlice[];
  /** Every ResourceClaim the API server has; the model keeps the ones of this node. */
  claims: readonly ResourceClaim[];
  taintRules: readonly DeviceTaintRule[];
  /**
   * Every DeviceClass (which extended resource names map to DRA); absent when not watched, and left
   * out of a list the API server does not serve (`notServed.DeviceClass`).
   */
  deviceClasses?: readonly DeviceClass[];
  /**
   * Kinds the API server does not serve (404), with why: that part of the view is empty rather than
   * failing the source (e.g. an API server without DeviceTaintRule).
   */
  notServed: Readonly<Record<string, string>>;
}

/** ResourceClaim annotation of the scheduler's special claim for a pod's extended resources (KEP-5004). */
export const EXTENDED_RESOURCE_CLAIM_ANNOTATION = 'resource.kubernetes.io/extended-resource-claim';

/** ResourceClaim annotation naming the pod's claim entry it was generated for. */
export const POD_CLAIM_NAME_ANNOTATION = 'resource.kubernetes.io/pod-claim-name';
