// The resource.k8s.io/v1 objects the gateway reads (ResourceSlice, ResourceClaim, DeviceTaintRule), in their JSON wire form as the API server sends them on a list or a watch
// (k8s.io/api/resource/v1/types.go). Only the fields the node model shows; everything optional that
// the API server may leave out. sources/kube.ts reads them raw (not through @kubernetes/client-node's
// models, which rename fields such as `int`), so list and watch objects have one shape.

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  annotations?: Record<string, string>;
  ownerReferences?: { apiVersion?: string; kind: string; name: string; uid?: string; controller?: boolean }[];
}

export type WireTaintEffect = 'NoSchedule' | 'NoExecute' | 'None';

export interface WireDeviceTaint {
  key: string;
  value?: string;
  effect: WireTaintEffect;
  timeAdded?: string;
}

export interface WireSliceDevice {
  name: string;
  attributes?: Record<string, { int?: number; bool?: boolean; string?: string; version?: string }>;
  capacity?: Record<string, { value: string }>;
  taints?: WireDeviceTaint[];
  allowMultipleAllocations?: boolean;
}

export interface WireResourceSlice {
  metadata: ObjectMeta;
  spec: {
    driver: string;
    pool: { name: string; generation: number; resourceSliceCount: number };
    nodeName?: string;
    devices?: WireSliceDevice[];
  };
}

export interface WireDeviceSubRequest {
  name: string;
  deviceClassName: string;
  selectors?: { cel?: { expression: string } }[];
  allocationMode?: 'ExactCount' | 'All';
  count?: number;
}

export interface WireDeviceRequest {
  name: string;
  exactly?: Omit<WireDeviceSubRequest, 'name'> & { adminAccess?: boolean };
  firstAvailable?: WireDeviceSubRequest[];
}

export interface WireAllocationResult {
  request: string;
  driver: string;
  pool: string;
  device: string;
  adminAccess?: boolean;
}

export interface WireResourceClaim {
  metadata: ObjectMeta & { namespace: string };
  spec?: { devices?: { requests?: WireDeviceRequest[] } };
  status?: {
    allocation?: { devices?: { results?: WireAllocationResult[] } };
    reservedFor?: { resource: string; name: string; uid?: string; apiGroup?: string }[];
  };
}

export interface WireDeviceTaintRule {
  metadata: ObjectMeta;
  spec: {
    /** Since 1.35 only driver, pool and device (deviceClassName and selectors are gone). */
    deviceSelector?: { driver?: string; pool?: string; device?: string };
    taint: WireDeviceTaint;
  };
}

/** The DRA objects the Kubernetes source hands the model (each list keeps unchanged objects). */
export interface DraKubeInput {
  /** This node's ResourceSlices (`spec.nodeName`). */
  slices: readonly WireResourceSlice[];
  /** Every ResourceClaim the API server has; the model keeps the ones of this node. */
  claims: readonly WireResourceClaim[];
  taintRules: readonly WireDeviceTaintRule[];
  /**
   * Kinds the API server does not serve (404), with why: that part of the view is empty rather than
   * failing the source (e.g. an API server without DeviceTaintRule).
   */
  notServed: Readonly<Record<string, string>>;
}

/** ResourceClaim annotation naming the pod's claim entry it was generated for. */
export const POD_CLAIM_NAME_ANNOTATION = 'resource.kubernetes.io/pod-claim-name';
