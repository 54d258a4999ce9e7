// The scheduler's DynamicResources plugin for one pod on one node: PreFilter, Filter, PostFilter,
// Reserve and PreBind of kubernetes pkg/scheduler/framework/plugins/dynamicresources/
// dynamicresources.go (1.37), with the allocator of ../structured.
//
// A pod whose claims can be allocated gets one AllocationResult per claim (existing allocations are
// kept) and updated claim objects: status.allocation written, the pod appended to status.reservedFor,
// the resource.kubernetes.io/delete-protection finalizer added. Otherwise the verdict carries the
// message the scheduler writes into the pod's PodScheduled condition (and its FailedScheduling event),
// assembled as framework.FitError prints it for a one-node cluster:
//
//   0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, preemption: 0/1 nodes
//   are available: 1 Preemption is not helpful for scheduling.
//
// (Filter rejection; the DRA PostFilter's own message comes before DefaultPreemption's), or, when
// PreFilter already rejects, `0/1 nodes are available: <reason>. no new claims to deallocate, …`.
// Fatal errors (a CEL runtime error, an unsupported field) are the scheduler's SchedulerError:
// `running "DynamicResources" filter plugin: <error>`. Nothing here throws for bad input.
//
// Extended resources backed by DRA (extendeddynamicresources.ts) ride along: the pod's special
// claim is allocated with its other claims (last, as upstream appends it) and comes back unnamed,
// for the caller to create as PreBind does.

import { randomUUID } from 'node:crypto';
import { Quantity } from '@plugboard/apimachinery';
import {
  kobj,
  Allocator,
  deviceKey,
  type AllocateOutcome,
  type AllocatorOptions,
} from '../structured/allocator.js';
import { SelectorCache } from '../structured/cel/compile.js';
import { applyDeviceTaintRules } from '../structured/device-taint-rules.js';
import { nodeSelectorMatches, type NodeInfo } from '../structured/node-selector.js';
import type {
  AllocationResult,
  ContainerExtendedResourceRequest,
  DeviceClass,
  DeviceTaintRule,
  Pod,
  ResourceClaim,
  ResourceClaimConsumerReference,
  ResourceSlice,
} from '../types.js';
import {
  DeviceClassResolver,
  filterExtendedResources,
  findExtendedResourceClaim,
  hasDeviceClassMappedExtendedResource,
  inMemoryExtendedResourceClaim,
  podRequests,
  SPECIAL_CLAIM_IN_MEM_NAME,
  type ExtendedResourcePod,
} from './extendeddynamicresources.js';

/** resourceapi.Finalizer: set on claims the scheduler allocates. */
export const RESOURCE_CLAIM_FINALIZER = 'resource.kubernetes.io/delete-protection';
/** resourceapi.ResourceClaimReservedForMaxSize. */
export const RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE = 256;
/** The plugin's name in the scheduler (names.DynamicResources). */
export const PLUGIN_NAME = 'DynamicResources';

export interface AllocateClaimsInput {
  /** The pod being scheduled: its claims are looked up in `claims` as PreFilter does, and it is the consumer written into reservedFor. Without it, `claims` are the pod's claims in order and reservedFor is left alone. */
  pod?: Pod;
  nodeName: string;
  nodeLabels?: Readonly<Record<string, string>>;
  /** The pod's ResourceClaims (with a pod: any claims of its namespace; the pod's are picked out). */
  claims: readonly ResourceClaim[];
  slices: readonly ResourceSlice[];
  classes: readonly DeviceClass[];
  /** Claims already allocated elsewhere: their devices are in use, except results with adminAccess. */
  allocated: readonly ResourceClaim[];
  taintRules?: readonly DeviceTaintRule[];
  /** A cache of compiled selectors to reuse across calls (cel.NewCache). */
  celCache?: SelectorCache;
  /**
   * DRAExtendedResource: the pod's containers' requests and the Node's `status.allocatable`
   * (counts). With it, extended resources a DeviceClass maps and no device plugin serves on this
   * node are allocated through the pod's special claim.
   */
  extendedResources?: { pod: ExtendedResourcePod; allocatable: ReadonlyMap<string, number> };
}

export type AllocateClaimsResult =
  | {
      ok: true;
      /** By claim UID: the claim's status.allocation (existing or new). */
      allocations: Map<string, AllocationResult>;
      /** The pod's claims as they are after PreBind: allocation, reservedFor, finalizer. */
      claims: ResourceClaim[];
      /**
       * The special claim for the pod's extended resources, to be created (generateName; the API
       * server names it) with this allocation, reservation and finalizer, and the mappings for
       * `pod.status.extendedResourceClaimStatus`.
       */
      extendedResourceClaim?: { claim: ResourceClaim; mappings: ContainerExtendedResourceRequest[] };
    }
  | {
      ok: false;
      /** The PodScheduled condition's reason: Unschedulable, or SchedulerError for fatal errors. */
      reason: 'Unschedulable' | 'SchedulerError';
      /** The condition message / FailedScheduling event text. */
      message: string;
      /** The plugin's own reasons (the node's filter status, or the error). */
      reasons: string[];
      /** UIDs of claims PostFilter deallocates to let the pod try again (allocated for another node). */
      deallocate?: string[];
      /** UIDs of claims PostFilter deletes: a special claim left by an earlier cycle. */
      deleteClaims?: string[];
    };

/** The plugin's LRU of compiled selectors, shared by every call (upstream: cel.NewCache(10)). */
const defaultCelCache = new SelectorCache(64);

const PREEMPTION_NOT_HELPFUL =
  'preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.';

function preFilterRejection(reason: string): AllocateClaimsResult {
  return {
    ok: false,
    reason: 'Unschedulable',
    message: `0/1 nodes are available: ${reason}. no new claims to deallocate, ${PREEMPTION_NOT_HELPFUL}`,
    reasons: [reason],
  };
}

function filterRejection(
  reason: string,
  postFilter: string,
  deallocate?: string[],
  deleteClaims?: string[],
): AllocateClaimsResult {
  return {
    ok: false,
    reason: 'Unschedulable',
    message: `0/1 nodes are available: 1 ${reason}. ${postFilter}, ${PREEMPTION_NOT_HELPFUL}`,
    reasons: [reason],
    ...(deallocate ? { deallocate } : {}),
    ...(deleteClaims ? { deleteClaims } : {}),
  };
}

function schedulerError(message: string): AllocateClaimsResult {
  return { ok: false, reason: 'SchedulerError', message, reasons: [message] };
}

/** foreachPodResourceClaim: the pod's claims in spec order, or the reason PreFilter rejects the pod. */
function podResourceClaims(pod: Pod, claims: readonly ResourceClaim[]): ResourceClaim[] | string {
  const namespace = pod.metadata.namespace ?? 'default';
  const result: ResourceClaim[] = [];
  for (const podClaim of pod.spec.resourceClaims ?? []) {
    let claimName: string | undefined;
    let mustCheckOwner = false;
    if (podClaim.resourceClaimName !== undefined) {
      claimName = podClaim.resourceClaimName;
    } else if (podClaim.resourceClaimTemplateName !== undefined) {
      const status = (pod.status?.resourceClaimStatuses ?? []).find((s) => s.name === podClaim.name);
      if (!status) return `pod "${namespace}/${pod.metadata.name}": ResourceClaim not created yet`;
      claimName = status.resourceClaimName;
      mustCheckOwner = true;
    } else {
      return `pod "${namespace}/${pod.metadata.name}", spec.resourceClaim "${podClaim.name}": none of the supported fields are set`;
    }
    // No claim needed for this entry.
    if (claimName === undefined) continue;
    const claim = claims.find(
      (c) => c.metadata.name === claimName && (c.metadata.namespace ?? namespace) === namespace,
    );
    if (!claim) return `resourceclaim.resource.k8s.io "${claimName}" not found`;
    if (claim.metadata.deletionTimestamp) return `resourceclaim "${claimName}" is being deleted`;
    if (mustCheckOwner) {
      const controlled = (claim.metadata.ownerReferences ?? []).some(
        (ref) => ref.controller === true && ref.uid === (pod.metadata.uid ?? ''),
      );
      if (!controlled) {
        return `ResourceClaim ${namespace}/${claimName} was not created for Pod ${namespace}/${pod.metadata.name} (Pod is not owner)`;
      }
    }
    result.push(claim);
  }
  return result;
}

const isReservedForPod = (claim: ResourceClaim, pod: Pod | undefined): boolean =>
  pod !== undefined && (claim.status?.reservedFor ?? []).some((r) => r.uid === (pod.metadata.uid ?? ''));

/**
 * Schedules one pod's claims onto this node: allocates the unallocated ones from the node's devices
 * and reserves every claim for the pod, or explains why the pod stays Pending.
 */
export function allocateClaims(input: AllocateClaimsInput): AllocateClaimsResult {
  const node: NodeInfo = { name: input.nodeName, labels: input.nodeLabels ?? {} };
  const pod = input.pod;

  // PreFilter.
  let claims: ResourceClaim[];
  if (pod) {
    const resolved = podResourceClaims(pod, input.claims);
    if (typeof resolved === 'string') return preFilterRejection(resolved);
    claims = resolved;
  } else {
    claims = [...input.claims];
  }
  // preFilterExtendedResources.
  const ext = input.extendedResources;
  let extended:
    { claim: ResourceClaim; requests: Map<string, number>; resolver: DeviceClassResolver } | undefined;
  if (ext) {
    const resolver = new DeviceClassResolver(input.classes);
    const requests = podRequests(ext.pod);
    if (hasDeviceClassMappedExtendedResource(requests, resolver)) {
      const claim =
        findExtendedResourceClaim(ext.pod, input.claims) ??
        inMemoryExtendedResourceClaim(ext.pod, randomUUID());
      extended = { claim, requests, resolver };
    }
  }
  if (claims.length === 0 && !extended) return { ok: true, allocations: new Map(), claims: [] };

  const classes = new Map(input.classes.map((c) => [c.metadata.name, c] as const));
  const toAllocate: ResourceClaim[] = [];
  for (const claim of claims) {
    const allocation = claim.status?.allocation;
    if (allocation) {
      if (allocation.nodeSelector) {
        try {
          nodeSelectorMatches(allocation.nodeSelector, node);
        } catch (err) {
          return schedulerError(`running PreFilter plugin "${PLUGIN_NAME}": ${(err as Error).message}`);
        }
      }
      continue;
    }
    toAllocate.push(claim);
    for (const request of claim.spec.devices.requests ?? []) {
      const checks: { className: string; requestName: string }[] = [];
      if (request.exactly) {
        checks.push({ className: request.exactly.deviceClassName, requestName: request.name });
      } else if ((request.firstAvailable ?? []).length > 0) {
        for (const sub of request.firstAvailable ?? []) {
          checks.push({ className: sub.deviceClassName, requestName: `${request.name}/${sub.name}` });
        }
      } else {
        return preFilterRejection(
          `resource claim ${kobj(claim)}, request ${request.name}: unknown request type`,
        );
      }
      for (const check of checks) {
        if (!check.className) {
          return schedulerError(
            `running PreFilter plugin "${PLUGIN_NAME}": request ${check.requestName}: unsupported request type`,
          );
        }
        if (!classes.has(check.className)) {
          return preFilterRejection(
            `request ${check.requestName}: device class ${check.className} does not exist`,
          );
        }
      }
    }
  }

  // Filter: filterExtendedResources first.
  let nodeExtended: { claim: ResourceClaim; mappings: ContainerExtendedResourceRequest[] } | undefined;
  if (ext && extended) {
    const f = filterExtendedResources(
      ext.pod,
      extended.claim,
      extended.requests,
      ext.allocatable,
      extended.resolver,
      claims.length > 0,
    );
    if (f.kind === 'unschedulable') {
      // PostFilter deletes a special claim written in an earlier cycle.
      return extended.claim.metadata.name === SPECIAL_CLAIM_IN_MEM_NAME
        ? filterRejection(f.reason, 'still not schedulable')
        : filterRejection(f.reason, 'deletion of ResourceClaim completed', undefined, [
            extended.claim.metadata.uid ?? '',
          ]);
    }
    if (f.kind === 'claim') {
      nodeExtended = f;
      toAllocate.push(f.claim);
    }
  }
  if (claims.length === 0 && !nodeExtended) return { ok: true, allocations: new Map(), claims: [] };

  const unavailable = claims.filter((claim) => {
    const selector = claim.status?.allocation?.nodeSelector;
    return selector !== undefined && !nodeSelectorMatches(selector, node);
  });

  let outcome: AllocateOutcome = { kind: 'allocated', results: [] };
  if (toAllocate.length > 0) {
    const allocator = new Allocator({
      ...allocatedState(input.allocated, claims),
      classes,
      slices: applyDeviceTaintRules(input.slices, input.taintRules ?? []),
      celCache: input.celCache ?? defaultCelCache,
    });
    outcome = allocator.allocate(node, toAllocate);
  }
  switch (outcome.kind) {
    case 'error':
      return schedulerError(`running "${PLUGIN_NAME}" filter plugin: ${outcome.message}`);
    case 'failedOnNode':
      return filterRejection(outcome.message, 'still not schedulable');
    case 'unsatisfiable':
      return filterRejection('cannot allocate all claims', 'still not schedulable');
    case 'allocated':
      break;
  }
  if (unavailable.length > 0) {
    // PostFilter deallocates one claim that no other pod uses, so that the next attempt may
    // allocate it for a node that suits the pod.
    const victim = unavailable.find((claim) => {
      const reserved = claim.status?.reservedFor ?? [];
      return (
        reserved.length === 0 ||
        (reserved.length === 1 && pod !== undefined && reserved[0]?.uid === pod.metadata.uid)
      );
    });
    return victim
      ? filterRejection(
          'resourceclaim not available on the node',
          'deallocation of ResourceClaim completed',
          [victim.metadata.uid ?? ''],
        )
      : filterRejection('resourceclaim not available on the node', 'still not schedulable');
  }

  // Reserve + PreBind.
  const allocations = new Map<string, AllocationResult>();
  const updated: ResourceClaim[] = [];
  let next = 0;
  for (const claim of claims) {
    let allocation = claim.status?.allocation;
    const copy: ResourceClaim = structuredClone(claim);
    if (!allocation) {
      allocation = outcome.results[next++];
      if (!allocation)
        return schedulerError(`running Reserve plugin "${PLUGIN_NAME}": claim allocation not found for node`);
      copy.metadata.finalizers = [
        ...new Set([...(copy.metadata.finalizers ?? []), RESOURCE_CLAIM_FINALIZER]),
      ];
      copy.status = { ...copy.status, allocation };
    }
    if (pod && !isReservedForPod(claim, pod)) {
      const reservedFor = copy.status?.reservedFor ?? [];
      if (reservedFor.length >= RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE) {
        return schedulerError(
          `running PreBind plugin "${PLUGIN_NAME}": add reservation to claim ${kobj(claim)}: status.reservedFor: Too many: ${reservedFor.length + 1}: must have at most ${RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE} items`,
        );
      }
      const consumer: ResourceClaimConsumerReference = {
        resource: 'pods',
        name: pod.metadata.name,
        uid: pod.metadata.uid ?? '',
      };
      copy.status = { ...copy.status, reservedFor: [...reservedFor, consumer] };
    }
    allocations.set(claim.metadata.uid ?? claim.metadata.name ?? '', allocation);
    updated.push(copy);
  }
  if (!nodeExtended) return { ok: true, allocations, claims: updated };
  const allocation = outcome.results[next];
  if (!allocation)
    return schedulerError(`running Reserve plugin "${PLUGIN_NAME}": claim allocation not found for node`);
  const claim = structuredClone(nodeExtended.claim);
  claim.metadata.finalizers = [RESOURCE_CLAIM_FINALIZER];
  claim.status = {
    allocation,
    ...(pod
      ? { reservedFor: [{ resource: 'pods', name: pod.metadata.name, uid: pod.metadata.uid ?? '' }] }
      : {}),
  };
  allocations.set(claim.metadata.uid ?? '', allocation);
  return {
    ok: true,
    allocations,
    claims: updated,
    extendedResourceClaim: { claim, mappings: nodeExtended.mappings },
  };
}

/**
 * The allocated state (allocateddevices.go, foreachAllocatedDevice with DRAConsumableCapacity on):
 * devices of allocated claims, except those allocated with admin access; a result with a shareID
 * is a share of its device and adds its consumedCapacity to the device's aggregated capacity.
 */
function allocatedState(
  allocated: readonly ResourceClaim[],
  podClaims: readonly ResourceClaim[],
): Pick<AllocatorOptions, 'allocatedDevices' | 'allocatedSharedDevices' | 'aggregatedCapacity'> {
  const devices = new Set<string>();
  const sharedDevices = new Set<string>();
  const aggregatedCapacity = new Map<string, Map<string, Quantity>>();
  const seen = new Set<string>();
  for (const claim of [...allocated, ...podClaims]) {
    const uid = claim.metadata.uid ?? `${claim.metadata.namespace ?? ''}/${claim.metadata.name ?? ''}`;
    if (seen.has(uid)) continue;
    seen.add(uid);
    for (const result of claim.status?.allocation?.devices.results ?? []) {
      if (result.adminAccess) continue;
      const key = deviceKey(result);
      if (result.shareID === undefined) {
        devices.add(key);
        continue;
      }
      sharedDevices.add(key);
      if (result.consumedCapacity === undefined) continue;
      let capacity = aggregatedCapacity.get(key);
      if (!capacity) aggregatedCapacity.set(key, (capacity = new Map<string, Quantity>()));
      for (const [name, raw] of Object.entries(result.consumedCapacity)) {
        const value = Quantity.fromJSON(raw);
        const before = capacity.get(name);
        capacity.set(name, before ? before.add(value) : value);
      }
    }
  }
  return { allocatedDevices: devices, allocatedSharedDevices: sharedDevices, aggregatedCapacity };
}
