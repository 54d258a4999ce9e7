// `snapshot.extendedResources`: per extended resource name this node knows, whether a device plugin
// or a DRA driver serves it (KEP-5004, extended resources backed by DRA) and the pods holding it each
// way — the per-node half of the migration view. A pure join of the Node's status, the DeviceClasses,
// the pods' `status.extendedResourceClaimStatus`, the special claims as `dra.claims` has them and the
// device-plugin devices PodResources lists per container (`pods[].containers[].devices`). Nothing is
// read from CEL selectors: a class's driver is only named once a claim got a device through it.
import type { V1Container, V1Node, V1Pod } from '@kubernetes/client-node';
import {
  IMPLICIT_EXTENDED_RESOURCE_PREFIX,
  type DraClaimState,
  type ExtendedResourcePod,
  type ExtendedResourceView,
  type PodState,
  type ResourceState,
} from '@plugboard/api';
import type { DeviceClass } from '@plugboard/k8s-api';
import { isExtendedResourceName } from '@plugboard/topology';

export interface ExtendedResourcesInputs {
  node: V1Node | null;
  /** `snapshot.resources`: the kubelet's counts where the Node is not known. */
  resources: Readonly<Record<string, ResourceState>>;
  /** null: DeviceClasses are not read (no Kubernetes API, or not served). */
  deviceClasses: readonly DeviceClass[] | null;
  /** Pods bound to this node. */
  pods: readonly V1Pod[];
  /** `snapshot.pods`: each container's device-plugin devices. */
  podStates: Readonly<Record<string, PodState>>;
  /** `snapshot.dra.claims`. */
  claims: Readonly<Record<string, DraClaimState>>;
  /** Whether this node's ResourceSlices publish any device (of any driver). */
  publishesDraDevices: boolean;
}

/** The names each class answers to: its `extendedResourceName` and its implicit name. */
function classesByResource(classes: readonly DeviceClass[]): Map<string, DeviceClass[]> {
  const out = new Map<string, DeviceClass[]>();
  const add = (name: string, c: DeviceClass): void => void out.set(name, [...(out.get(name) ?? []), c]);
  for (const c of classes) {
    if (c.spec.extendedResourceName) add(c.spec.extendedResourceName, c);
    add(`${IMPLICIT_EXTENDED_RESOURCE_PREFIX}${c.metadata.name}`, c);
  }
  return out;
}

/** The scheduler's pick among classes sharing a name: the newest, then the smaller name. */
function pickClass(classes: readonly DeviceClass[]): string | null {
  const sorted = [...classes].sort((a, b) => {
    const ta = a.metadata.creationTimestamp ?? '';
    const tb = b.metadata.creationTimestamp ?? '';
    if (ta !== tb) return ta < tb ? 1 : -1;
    return a.metadata.name < b.metadata.name ? -1 : 1;
  });
  return sorted[0]?.metadata.name ?? null;
}

/** A container's extended resources: its request of each, else its limit (the API server defaults one to the other). */
function containerAsks(c: V1Container, parseCount: (q: string | undefined) => number): Map<string, number> {
  const out = new Map<string, number>();
  const requests = c.resources?.requests ?? {};
  const limits = c.resources?.limits ?? {};
  for (const name of new Set([...Object.keys(requests), ...Object.keys(limits)])) {
    // The implicit name is in the kubernetes.io domain, so not an extended resource name to
    // v1helper; the scheduler accepts it all the same.
    if (!isExtendedResourceName(name) && !name.startsWith(IMPLICIT_EXTENDED_RESOURCE_PREFIX)) continue;
    const count = parseCount(String(requests[name] ?? limits[name]));
    if (count > 0) out.set(name, count);
  }
  return out;
}

/** Devices of a claim allocated for `request` (or one of its subrequests). */
function requestDevices(claim: DraClaimState | undefined, request: string): DraClaimState['devices'] {
  return (claim?.devices ?? []).filter((d) => d.request === request || d.request.startsWith(`${request}/`));
}

export function buildExtendedResources(
  inputs: ExtendedResourcesInputs,
  parseCount: (q: string | undefined) => number,
): Record<string, ExtendedResourceView> {
  const classes = inputs.deviceClasses === null ? null : classesByResource(inputs.deviceClasses);
  const pods = new Map<string, ExtendedResourcePod[]>();
  const add = (name: string, p: ExtendedResourcePod): void =>
    void pods.set(name, [...(pods.get(name) ?? []), p]);
  const drivers = new Map<string, Set<string>>();
  for (const pod of inputs.pods) {
    const namespace = pod.metadata?.namespace ?? 'default';
    const key = `${namespace}/${pod.metadata?.name ?? ''}`;
    const status = pod.status?.extendedResourceClaimStatus;
    const claimKey = status ? `${namespace}/${status.resourceClaimName}` : null;
    const containers = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
    for (const c of containers) {
      for (const [name, count] of containerAsks(c, parseCount)) {
        const mapping = status?.requestMappings.find(
          (m) => m.containerName === c.name && m.resourceName === name,
        );
        if (mapping && claimKey) {
          const devices = requestDevices(inputs.claims[claimKey], mapping.requestName);
          for (const d of devices) drivers.set(name, (drivers.get(name) ?? new Set()).add(d.driver));
          add(name, {
            pod: key,
            container: c.name,
            count,
            via: 'dra',
            claim: claimKey,
            request: mapping.requestName,
            devices: devices.map((d) => d.deviceKey),
          });
          continue;
        }
        const held = inputs.podStates[key]?.containers.find((x) => x.name === c.name)?.devices[name] ?? [];
        add(name, {
          pod: key,
          container: c.name,
          count,
          via: held.length > 0 ? 'device-plugin' : 'unknown',
          claim: null,
          request: null,
          devices: [...held],
        });
      }
    }
  }

  const nodeStatus = inputs.node?.status;
  const names = new Set<string>();
  for (const name of Object.keys({ ...nodeStatus?.capacity, ...nodeStatus?.allocatable }))
    if (isExtendedResourceName(name)) names.add(name);
  for (const name of Object.keys(inputs.resources)) names.add(name);
  for (const c of inputs.deviceClasses ?? [])
    if (c.spec.extendedResourceName) names.add(c.spec.extendedResourceName);
  for (const name of pods.keys()) names.add(name);

  const out: Record<string, ExtendedResourceView> = {};
  for (const name of [...names].sort()) {
    const listed =
      nodeStatus !== undefined
        ? name in (nodeStatus.capacity ?? {}) || name in (nodeStatus.allocatable ?? {})
          ? {
              capacity: parseCount(nodeStatus.capacity?.[name]),
              allocatable: parseCount(nodeStatus.allocatable?.[name]),
            }
          : null
        : (inputs.resources[name]?.apiServer ?? inputs.resources[name]?.kubelet ?? null);
    const status = listed ? { capacity: listed.capacity, allocatable: listed.allocatable } : null;
    const mapping = classes?.get(name) ?? [];
    out[name] = {
      name,
      // A class's CEL selectors are not evaluated here: 'dra' needs a class mapping the name and a
      // node that publishes DRA devices at all (else a pod asking for it would wait here for ever).
      servedBy:
        status && status.allocatable > 0
          ? 'device-plugin'
          : mapping.length > 0 && inputs.publishesDraDevices
            ? 'dra'
            : 'none',
      nodeStatus: status,
      deviceClasses: classes === null ? null : mapping.map((c) => c.metadata.name).sort(),
      deviceClass: pickClass(mapping),
      drivers: [...(drivers.get(name) ?? [])].sort(),
      pods: pods.get(name) ?? [],
    };
  }
  return out;
}
