// The structured-parameters allocator: k8s.io/dynamic-resource-allocation/structured/allocator.go and
// the "stable" implementation, structured/internal/stable/allocator_stable.go (1.37): admin access,
// prioritized lists (firstAvailable), partitionable devices (shared counters) and device taints —
// plus consumable capacity as the "incubating" implementation has it
// (internal/incubating/allocator_incubating.go and consumable_capacity.go), which a 1.37 scheduler
// picks because DRAConsumableCapacity (beta since 1.36) is on by default: a device with
// allowMultipleAllocations is shared — never marked in use, each allocation gets a new shareID and
// consumes part of the device's capacities (its request rounded up by the capacity's requestPolicy,
// or the policy's default, else all of it), refused once a capacity is exhausted; its counters are
// charged once, by the first share.
//
// Allocation is an exhaustive depth-first search that stops at the first solution: claims in order,
// requests in order, for each required device every eligible device of every complete, valid pool
// in turn (not in use, class and request selectors match, node matches, taints tolerated, counters
// available, constraints still satisfiable), backtracking on failure. "All" requests fix their
// device set up front. A firstAvailable request tries its subrequests in order.
//
// Three outcomes, as upstream: results for every claim; no solution (the scheduler's "cannot allocate
// all claims"); or an error. Errors that only concern this node (invalid pools) are marked
// `onNode`; all others are fatal for the scheduling attempt (bad CEL, unsupported API fields).
//
// Not here: binding conditions (beta in the incubating allocator; devices that have them are never
// selected), distinctAttribute constraints and list-type attributes in matchAttribute (alpha).

import { randomUUID } from 'node:crypto';
import type {
  AllocationResult,
  CapacityRequirements,
  Counter,
  Device,
  DeviceAllocationConfiguration,
  DeviceAttribute,
  DeviceClass,
  DeviceRequest,
  DeviceSubRequest,
  DeviceSelector,
  DeviceToleration,
  NodeSelector,
  NodeSelectorRequirement,
  ResourceClaim,
  ResourceSlice,
} from '../types.js';
import { SelectorCache } from './cel/compile.js';
import { enhanceRuntimeError } from './cel/errors.js';
import { Quantity } from '@plugboard/apimachinery';
import { taintPreventsAllocation } from './device-toleration.js';
import { nodeMatches, type NodeInfo } from './node-selector.js';
import { gatherPools, type Pool } from './pools.js';
import {
  CapacityError,
  cmpRequestOverCapacity,
  consumedCapacityFromRequest,
  type ConsumedCapacity,
} from './consumable-capacity.js';

/** resourceapi.AllocationResultsMaxSize. */
export const ALLOCATION_RESULTS_MAX_SIZE = 32;

export interface DeviceID {
  driver: string;
  pool: string;
  device: string;
}

/** DeviceID.String(): `<driver>/<pool>/<device>`. */
export const deviceKey = (id: DeviceID): string => `${id.driver}/${id.pool}/${id.device}`;

export type AllocateOutcome =
  | { kind: 'allocated'; results: AllocationResult[] }
  /** Allocate returned (nil, nil): no solution on this node. */
  | { kind: 'unsatisfiable' }
  /** An ErrFailedAllocationOnNode error: unschedulable on this node with this message. */
  | { kind: 'failedOnNode'; message: string }
  /** Any other error: the scheduling attempt fails with this message. */
  | { kind: 'error'; message: string };

export interface AllocatorOptions {
  /**
   * Devices in use by already allocated claims (adminAccess results and shares excluded), as
   * deviceKey: AllocatedState.AllocatedDevices.
   */
  allocatedDevices: ReadonlySet<string>;
  /**
   * Devices that allocated claims hold a share of (results with a shareID), as deviceKey:
   * AllocatedState.AllocatedSharedDeviceIDs reduced to their devices.
   */
  allocatedSharedDevices?: ReadonlySet<string>;
  /** Per deviceKey, the capacity those shares consume together: AllocatedState.AggregatedCapacity. */
  aggregatedCapacity?: ReadonlyMap<string, ReadonlyMap<string, Quantity>>;
  classes: ReadonlyMap<string, DeviceClass>;
  /** ResourceSlices with DeviceTaintRules already applied. */
  slices: readonly ResourceSlice[];
  celCache?: SelectorCache;
}

class AllocationError extends Error {
  override readonly name = 'AllocationError';
}
/** errAllocationResultMaxSizeExceeded: drives more aggressive backtracking. */
class ResultMaxSizeExceeded extends Error {
  override readonly name = 'ResultMaxSizeExceeded';
}

/** klog.KObj: `namespace/name`. */
export const kobj = (claim: ResourceClaim): string =>
  claim.metadata.namespace
    ? `${claim.metadata.namespace}/${claim.metadata.name ?? ''}`
    : (claim.metadata.name ?? '');

interface RequestAccessor {
  name: string;
  deviceClassName: string;
  allocationMode: string;
  count: number;
  adminAccess: boolean;
  hasAdminAccess: boolean;
  selectors: DeviceSelector[];
  tolerations: DeviceToleration[] | undefined;
  capacity: CapacityRequirements | undefined;
}

function exactAccessor(requests: readonly DeviceRequest[], index: number): RequestAccessor {
  const r = requests[index]!;
  const exactly = r.exactly ?? { deviceClassName: '' };
  const mode = exactly.allocationMode || 'ExactCount';
  return {
    name: r.name,
    deviceClassName: exactly.deviceClassName,
    allocationMode: mode,
    count: mode === 'ExactCount' ? (exactly.count ?? 1) : (exactly.count ?? 0),
    adminAccess: exactly.adminAccess ?? false,
    hasAdminAccess: exactly.adminAccess !== undefined,
    selectors: exactly.selectors ?? [],
    tolerations: exactly.tolerations,
    capacity: exactly.capacity,
  };
}

function subAccessor(sub: DeviceSubRequest): RequestAccessor {
  const mode = sub.allocationMode || 'ExactCount';
  return {
    name: sub.name,
    deviceClassName: sub.deviceClassName,
    allocationMode: mode,
    count: mode === 'ExactCount' ? (sub.count ?? 1) : (sub.count ?? 0),
    adminAccess: false,
    hasAdminAccess: false,
    selectors: sub.selectors ?? [],
    tolerations: sub.tolerations,
    capacity: sub.capacity,
  };
}

interface DeviceWithID {
  id: DeviceID;
  key: string;
  device: Device;
  slice: ResourceSlice;
  pool: Pool;
}

interface RequestData {
  request: RequestAccessor;
  parentRequest: RequestAccessor | undefined;
  class: DeviceClass | undefined;
  numDevices: number;
  /** Set on the entry of subrequest 0: the subrequest that got picked. */
  selectedSubRequestIndex: number;
  allDevices: DeviceWithID[] | undefined;
}

const requestDataName = (rd: RequestData): string =>
  rd.parentRequest ? `${rd.parentRequest.name}/${rd.request.name}` : rd.request.name;

interface RequestIndices {
  claimIndex: number;
  requestIndex: number;
  subRequestIndex: number;
}
interface DeviceIndices extends RequestIndices {
  deviceIndex: number;
}
const indicesKey = (r: RequestIndices): string => `${r.claimIndex}/${r.requestIndex}/${r.subRequestIndex}`;

interface InternalDeviceResult {
  request: string;
  parentRequest: string;
  id: DeviceID;
  device: Device;
  slice: ResourceSlice;
  adminAccess: boolean | undefined;
  shareID: string | undefined;
  consumedCapacity: ConsumedCapacity | undefined;
}

const resultRequestName = (r: InternalDeviceResult): string =>
  r.parentRequest ? `${r.parentRequest}/${r.request}` : r.request;

/** matchAttributeConstraint: every device of the named requests has the attribute, with one value. */
class MatchAttributeConstraint {
  private attribute: DeviceAttribute | undefined;
  private numDevices = 0;

  constructor(
    private readonly requestNames: ReadonlySet<string>,
    private readonly attributeName: string,
  ) {}

  private applies(requestName: string, subRequestName: string): boolean {
    if (this.requestNames.size === 0) return true;
    if (!subRequestName) return this.requestNames.has(requestName);
    return this.requestNames.has(requestName) || this.requestNames.has(`${requestName}/${subRequestName}`);
  }

  add(requestName: string, subRequestName: string, device: Device, id: DeviceID): boolean {
    if (!this.applies(requestName, subRequestName)) return true;
    const attribute = lookupAttribute(device, id, this.attributeName);
    if (!attribute) return false;
    if (this.numDevices === 0) {
      this.attribute = attribute;
      this.numDevices = 1;
      return true;
    }
    const first = this.attribute ?? {};
    if (attribute.string !== undefined) {
      if (first.string === undefined || attribute.string !== first.string) return false;
    } else if (attribute.int !== undefined) {
      if (first.int === undefined || BigInt(attribute.int) !== BigInt(first.int)) return false;
    } else if (attribute.bool !== undefined) {
      if (first.bool === undefined || attribute.bool !== first.bool) return false;
    } else if (attribute.version !== undefined) {
      // semver 2.0.0 versions are in minimal form, so string equality is exact equality.
      if (first.version === undefined || attribute.version !== first.version) return false;
    } else {
      return false;
    }
    this.numDevices++;
    return true;
  }

  remove(requestName: string, subRequestName: string): void {
    if (!this.applies(requestName, subRequestName)) return;
    this.numDevices--;
  }
}

/** lookupAttribute: the fully qualified name, or the bare id when the domain is the driver's. */
function lookupAttribute(device: Device, id: DeviceID, name: string): DeviceAttribute | undefined {
  const attributes = device.attributes ?? {};
  if (Object.hasOwn(attributes, name)) return attributes[name];
  const sep = name.indexOf('/');
  if (sep < 0 || name.slice(0, sep) !== id.driver) return undefined;
  const bare = name.slice(sep + 1);
  return Object.hasOwn(attributes, bare) ? attributes[bare] : undefined;
}

type CounterSets = Map<string, Map<string, Quantity>>;

const counterValue = (c: Counter | undefined): Quantity => Quantity.fromJSON(c?.value ?? '0');

/** Allocator (allocator.go's interface, the stable implementation). Reusable across nodes. */
export class Allocator {
  private readonly celCache: SelectorCache;
  /** availableCounters: per pool name, computed once (keyed by pool name as upstream). */
  private readonly availableCounters = new Map<string, CounterSets>();

  constructor(private readonly opts: AllocatorOptions) {
    this.celCache = opts.celCache ?? new SelectorCache();
  }

  /** Allocate: the allocation for each claim (all unallocated), in order, on this node. */
  allocate(node: NodeInfo, claims: readonly ResourceClaim[]): AllocateOutcome {
    try {
      return new AllocationRun(this.opts, this.celCache, this.availableCounters, node, claims).run();
    } catch (err) {
      if (err instanceof AllocationError) return { kind: 'error', message: err.message };
      if (err instanceof CapacityError) return { kind: 'error', message: err.message };
      throw err;
    }
  }
}

/** One Allocate call: the `allocator` struct of allocator_stable.go. */
class AllocationRun {
  private pools: Pool[] = [];
  private readonly deviceMatchesRequest = new Map<string, boolean>();
  private readonly constraints: MatchAttributeConstraint[][] = [];
  private readonly consumedCounters = new Map<string, CounterSets>();
  private readonly requestData = new Map<string, RequestData>();
  private readonly allocatingDevices = new Map<string, Set<number>>();
  /** allocatingCapacity: what the shares allocated in this run consume, per deviceKey. */
  private readonly allocatingCapacity = new Map<string, ConsumedCapacity>();
  private readonly result: InternalDeviceResult[][];

  constructor(
    private readonly opts: AllocatorOptions,
    private readonly celCache: SelectorCache,
    private readonly availableCounters: Map<string, CounterSets>,
    private readonly node: NodeInfo,
    private readonly claims: readonly ResourceClaim[],
  ) {
    this.result = claims.map(() => []);
  }

  run(): AllocateOutcome {
    try {
      this.pools = gatherPools(this.opts.slices, this.node);
    } catch (err) {
      throw new AllocationError(`gather pool information: ${(err as Error).message}`);
    }

    this.claims.forEach((claim, claimIndex) => {
      let minDevicesPerClaim = 0;
      const requests = claim.spec.devices.requests ?? [];
      requests.forEach((request, requestIndex) => {
        const key: RequestIndices = { claimIndex, requestIndex, subRequestIndex: 0 };
        const subRequests = request.firstAvailable ?? [];
        if (subRequests.length > 0) {
          let minDevicesPerRequest = Number.MAX_SAFE_INTEGER;
          subRequests.forEach((sub, i) => {
            const subKey = { ...key, subRequestIndex: i };
            const data = this.validateDeviceRequest(
              subAccessor(sub),
              exactAccessor(requests, requestIndex),
              subKey,
            );
            this.requestData.set(indicesKey(subKey), data);
            minDevicesPerRequest = Math.min(minDevicesPerRequest, data.numDevices);
          });
          minDevicesPerClaim += minDevicesPerRequest;
        } else {
          const data = this.validateDeviceRequest(exactAccessor(requests, requestIndex), undefined, key);
          this.requestData.set(indicesKey(key), data);
          minDevicesPerClaim += data.numDevices;
        }
      });
      if (minDevicesPerClaim > ALLOCATION_RESULTS_MAX_SIZE) {
        throw new AllocationError(
          `claim ${kobj(claim)}: number of requested devices ${minDevicesPerClaim} exceeds the claim limit of ${ALLOCATION_RESULTS_MAX_SIZE}`,
        );
      }
      this.constraints[claimIndex] = (claim.spec.devices.constraints ?? []).map((constraint, i) => {
        if (constraint.matchAttribute !== undefined) {
          return new MatchAttributeConstraint(new Set(constraint.requests ?? []), constraint.matchAttribute);
        }
        throw new AllocationError(
          `claim ${kobj(claim)}, constraint #${i}: empty constraint (unsupported constraint type?)`,
        );
      });
    });

    let done: boolean;
    try {
      done = this.allocateOne({ claimIndex: 0, requestIndex: 0, subRequestIndex: 0, deviceIndex: 0 }, false);
    } catch (err) {
      if (err instanceof ResultMaxSizeExceeded) throw new AllocationError('allocation max size exceeded');
      throw err;
    }
    if (!done) {
      if (this.pools.some((p) => p.isInvalid)) {
        return { kind: 'failedOnNode', message: 'invalid resource pools were encountered' };
      }
      return { kind: 'unsatisfiable' };
    }
    return { kind: 'allocated', results: this.claims.map((claim, i) => this.buildResult(claim, i)) };
  }

  private buildResult(claim: ResourceClaim, claimIndex: number): AllocationResult {
    const devices = this.result[claimIndex] ?? [];
    const requests = claim.spec.devices.requests ?? [];
    const results = devices.map((r) => {
      const tolerations = this.lookupRequest(claim, r)?.tolerations;
      return {
        request: resultRequestName(r),
        driver: r.id.driver,
        pool: r.id.pool,
        device: r.id.device,
        ...(r.adminAccess !== undefined ? { adminAccess: r.adminAccess } : {}),
        ...(tolerations !== undefined ? { tolerations } : {}),
        ...(r.shareID !== undefined ? { shareID: r.shareID } : {}),
        ...(r.consumedCapacity !== undefined
          ? {
              consumedCapacity: Object.fromEntries(
                [...r.consumedCapacity].map(([name, value]) => [name, value.canonicalString()]),
              ),
            }
          : {}),
      };
    });

    // Configs: each class's configs once (their request lists grow), then the claim's.
    const config: DeviceAllocationConfiguration[] = [];
    const classRanges = new Map<string, { start: number; end: number }>();
    requests.forEach((_request, requestIndex) => {
      let data = this.requestData.get(indicesKey({ claimIndex, requestIndex, subRequestIndex: 0 }));
      if (data?.parentRequest) {
        data = this.requestData.get(
          indicesKey({ claimIndex, requestIndex, subRequestIndex: data.selectedSubRequestIndex }),
        );
      }
      const cls = data?.class;
      if (!data || !cls) return;
      const range = classRanges.get(cls.metadata.name);
      if (range) {
        for (let i = range.start; i < range.end; i++) config[i]?.requests?.push(requestDataName(data));
        return;
      }
      const start = config.length;
      for (const c of cls.spec.config ?? []) {
        config.push({ source: 'FromClass', requests: [requestDataName(data)], ...deviceConfiguration(c) });
      }
      classRanges.set(cls.metadata.name, { start, end: config.length });
    });
    for (const c of claim.spec.devices.config ?? []) {
      const configRequests = c.requests ?? [];
      const entry = (): DeviceAllocationConfiguration => ({
        source: 'FromClaim',
        ...(c.requests !== undefined ? { requests: [...c.requests] } : {}),
        ...deviceConfiguration(c),
      });
      if (configRequests.length === 0) {
        config.push(entry());
        continue;
      }
      for (let i = 0; i < requests.length; i++) {
        const request = requests[i]!;
        if (configRequests.includes(request.name)) {
          config.push(entry());
          break;
        }
        const data = this.requestData.get(indicesKey({ claimIndex, requestIndex: i, subRequestIndex: 0 }));
        if (!data?.parentRequest) continue;
        const sub = request.firstAvailable?.[data.selectedSubRequestIndex];
        if (sub && configRequests.includes(`${request.name}/${sub.name}`)) {
          config.push(entry());
          break;
        }
      }
    }
    // A config that names every request applies to all: "empty means all".
    for (const c of config) {
      if (!c.requests || c.requests.length === 0) continue;
      const names = c.requests;
      const appliesToAll = requests.every((request, i) => {
        if (names.includes(request.name)) return true;
        const data = this.requestData.get(indicesKey({ claimIndex, requestIndex: i, subRequestIndex: 0 }));
        if (data?.parentRequest) {
          const sub = request.firstAvailable?.[data.selectedSubRequestIndex];
          if (sub && names.includes(`${request.name}/${sub.name}`)) return true;
        }
        return false;
      });
      if (appliesToAll) delete c.requests;
    }

    let nodeSelector: NodeSelector | undefined;
    try {
      nodeSelector = createNodeSelector(devices);
    } catch (err) {
      throw new AllocationError(
        `create NodeSelector for claim ${claim.metadata.name ?? ''}: ${(err as Error).message}`,
      );
    }
    return {
      devices: { ...(results.length > 0 ? { results } : {}), ...(config.length > 0 ? { config } : {}) },
      ...(nodeSelector ? { nodeSelector } : {}),
    };
  }

  private lookupRequest(claim: ResourceClaim, r: InternalDeviceResult): RequestAccessor | undefined {
    const requests = claim.spec.devices.requests ?? [];
    const name = r.parentRequest || r.request;
    const index = requests.findIndex((req) => req.name === name);
    const request = requests[index];
    if (!request) return undefined;
    if (!r.parentRequest) return exactAccessor(requests, index);
    const sub = (request.firstAvailable ?? []).find((s) => s.name === r.request);
    return sub ? subAccessor(sub) : undefined;
  }

  private validateDeviceRequest(
    request: RequestAccessor,
    parentRequest: RequestAccessor | undefined,
    key: RequestIndices,
  ): RequestData {
    const claim = this.claims[key.claimIndex]!;
    const data: RequestData = {
      request,
      parentRequest,
      class: undefined,
      numDevices: 0,
      selectedSubRequestIndex: 0,
      allDevices: undefined,
    };
    request.selectors.forEach((selector, i) => {
      if (!selector.cel) {
        throw new AllocationError(
          `claim ${kobj(claim)}, request ${request.name}, selector #${i}: CEL expression empty (unsupported selector type?)`,
        );
      }
    });
    if (!request.deviceClassName) {
      throw new AllocationError(
        `claim ${kobj(claim)}, request ${request.name}: missing device class name (unsupported request type?)`,
      );
    }
    const cls = this.opts.classes.get(request.deviceClassName);
    if (!cls) {
      throw new AllocationError(
        `claim ${kobj(claim)}, request ${request.name}: could not retrieve device class ${request.deviceClassName}: deviceclass.resource.k8s.io "${request.deviceClassName}" not found`,
      );
    }
    data.class = cls;

    switch (request.allocationMode) {
      case 'ExactCount':
        data.numDevices = request.count;
        break;
      case 'All': {
        const all: DeviceWithID[] = [];
        for (const pool of this.pools) {
          if (pool.isIncomplete) {
            throw new AllocationError(
              `claim ${kobj(claim)}, request ${request.name}: asks for all devices, but resource pool ${pool.id} is currently being updated`,
            );
          }
          if (pool.isInvalid) {
            throw new AllocationError(
              `claim ${kobj(claim)}, request ${request.name}: asks for all devices, but resource pool ${pool.id} is currently invalid`,
            );
          }
          for (const slice of pool.deviceSlicesTargetingNode) {
            (slice.spec.devices ?? []).forEach((device, deviceIndex) => {
              if (this.isSelectable(key, data, slice, deviceIndex)) {
                const id = { driver: slice.spec.driver, pool: slice.spec.pool.name, device: device.name };
                // Static capacity only: what is left is checked in allocateDevice, so a matching
                // device whose capacity is taken stays in the set and the request fails.
                if (!this.capacityFits(claim, request, id, device, new Map(), undefined)) return;
                all.push({ id, key: deviceKey(id), device, slice, pool });
              }
            });
          }
        }
        data.allDevices = all;
        data.numDevices = all.length;
        break;
      }
      default:
        throw new AllocationError(
          `claim ${kobj(claim)}, request ${request.name}: unsupported count mode ${request.allocationMode}`,
        );
    }
    return data;
  }

  /** allocateOne: true once everything from `r` on is allocated. */
  private allocateOne(r: DeviceIndices, allocateSubRequest: boolean): boolean {
    if (r.claimIndex >= this.claims.length) return true;
    const claim = this.claims[r.claimIndex]!;
    const requests = claim.spec.devices.requests ?? [];
    if (r.requestIndex >= requests.length) {
      try {
        return this.allocateOne(
          { claimIndex: r.claimIndex + 1, requestIndex: 0, subRequestIndex: 0, deviceIndex: 0 },
          false,
        );
      } catch (err) {
        // Not fatal: another allocation of an earlier claim may allow a smaller subrequest here.
        if (err instanceof ResultMaxSizeExceeded) return false;
        throw err;
      }
    }

    const requestKey: RequestIndices = r;
    const requestData = this.requestData.get(indicesKey(requestKey))!;

    if (!allocateSubRequest && requestData.parentRequest) {
      let allExceeded = true;
      for (let subRequestIndex = 0; ; subRequestIndex++) {
        const next = { ...requestKey, subRequestIndex };
        if (!this.requestData.has(indicesKey(next))) {
          if (allExceeded) throw new ResultMaxSizeExceeded();
          return false;
        }
        let success: boolean;
        try {
          success = this.allocateOne({ ...r, subRequestIndex }, true);
        } catch (err) {
          if (err instanceof ResultMaxSizeExceeded) continue;
          throw err;
        }
        allExceeded = false;
        if (success) {
          requestData.selectedSubRequestIndex = subRequestIndex;
          return true;
        }
      }
    }

    const request = requestData.request;
    const doAllDevices = request.allocationMode === 'All';
    if (doAllDevices && (requestData.allDevices ?? []).length === 0) return false;

    if (r.deviceIndex >= requestData.numDevices) {
      return this.allocateOne(
        { claimIndex: r.claimIndex, requestIndex: r.requestIndex + 1, subRequestIndex: 0, deviceIndex: 0 },
        false,
      );
    }

    const numDevicesAfterAlloc =
      (this.result[r.claimIndex]?.length ?? 0) + requestData.numDevices - r.deviceIndex;
    if (numDevicesAfterAlloc > ALLOCATION_RESULTS_MAX_SIZE) throw new ResultMaxSizeExceeded();

    if (doAllDevices) {
      const device = requestData.allDevices![r.deviceIndex]!;
      const allocated = this.allocateDevice(r, device, true);
      if (!allocated) return false;
      let done = false;
      try {
        done = this.allocateOne({ ...r, deviceIndex: r.deviceIndex + 1 }, allocateSubRequest);
      } finally {
        if (!done) allocated();
      }
      return done;
    }

    for (const pool of this.pools) {
      if (pool.isIncomplete || pool.isInvalid) continue;
      for (const slice of pool.deviceSlicesTargetingNode) {
        const devices = slice.spec.devices ?? [];
        for (let deviceIndex = 0; deviceIndex < devices.length; deviceIndex++) {
          const device = devices[deviceIndex]!;
          const id = { driver: pool.driver, pool: pool.pool, device: device.name };
          const key = deviceKey(id);
          if (request.adminAccess && this.allocatingDeviceForClaim(key, r.claimIndex)) continue;
          if (!request.adminAccess && this.deviceInUse(key)) continue;
          if (!this.isSelectable(requestKey, requestData, slice, deviceIndex)) continue;
          if (!this.capacityFits(claim, request, id, device, this.allocatedCapacity(key), key)) continue;
          const deallocate = this.allocateDevice(r, { id, key, device, slice, pool }, false);
          if (!deallocate) continue;
          let done = false;
          try {
            done = this.allocateOne({ ...r, deviceIndex: r.deviceIndex + 1 }, allocateSubRequest);
          } finally {
            if (!done) deallocate();
          }
          if (done) return true;
        }
      }
    }
    return false;
  }

  /** isSelectable: class selectors, request selectors and per-device node selection. Cached. */
  private isSelectable(
    r: RequestIndices,
    requestData: RequestData,
    slice: ResourceSlice,
    deviceIndex: number,
  ): boolean {
    const device = slice.spec.devices![deviceIndex]!;
    // DeviceBindingAndStatus is not a stable feature: devices with binding conditions are skipped.
    if ((device.bindingConditions ?? []).length > 0) return false;
    const id = { driver: slice.spec.driver, pool: slice.spec.pool.name, device: device.name };
    const matchKey = `${deviceKey(id)}|${indicesKey(r)}`;
    const cached = this.deviceMatchesRequest.get(matchKey);
    if (cached !== undefined) return cached;

    let matches =
      (!requestData.class ||
        this.selectorsMatch(r, device, id, requestData.class, requestData.class.spec.selectors ?? [])) &&
      this.selectorsMatch(r, device, id, undefined, requestData.request.selectors);
    if (matches && slice.spec.perDeviceNodeSelection) {
      try {
        matches = nodeMatches(this.node, device.nodeName, device.allNodes, device.nodeSelector);
      } catch (err) {
        throw new AllocationError((err as Error).message);
      }
    }
    this.deviceMatchesRequest.set(matchKey, matches);
    return matches;
  }

  private selectorsMatch(
    r: RequestIndices,
    device: Device,
    id: DeviceID,
    cls: DeviceClass | undefined,
    selectors: readonly DeviceSelector[],
  ): boolean {
    const owner = cls ? `class ${cls.metadata.name}` : `claim ${kobj(this.claims[r.claimIndex]!)}`;
    for (const [i, selector] of selectors.entries()) {
      const compiled = this.celCache.getOrCompile(selector.cel?.expression ?? '');
      if (!compiled.ok) {
        throw new AllocationError(`${owner}: selector #${i}: CEL compile error: ${compiled.error.detail}`);
      }
      const result = compiled.selector.deviceMatches({
        driver: id.driver,
        ...(device.allowMultipleAllocations !== undefined
          ? { allowMultipleAllocations: device.allowMultipleAllocations }
          : {}),
        ...(device.attributes ? { attributes: device.attributes } : {}),
        ...(device.capacity ? { capacity: device.capacity } : {}),
      });
      if (result.error !== undefined) {
        throw new AllocationError(
          `${owner}: selector #${i} on device ${deviceKey(id)}: CEL runtime error: ${enhanceRuntimeError(result.error)}`,
        );
      }
      if (!result.matches) return false;
    }
    return true;
  }

  /**
   * allocateDevice: availability, counters, taints and constraints for one candidate. Returns the
   * rollback, or undefined if the device cannot be used now.
   */
  private allocateDevice(r: DeviceIndices, device: DeviceWithID, must: boolean): (() => void) | undefined {
    const claim = this.claims[r.claimIndex]!;
    const requestData = this.requestData.get(indicesKey(r))!;
    const request = requestData.request;
    const allowMultipleAllocations = device.device.allowMultipleAllocations === true;
    if (
      !allowMultipleAllocations &&
      request.adminAccess &&
      this.allocatingDeviceForClaim(device.key, r.claimIndex)
    )
      return undefined;
    if (!request.adminAccess && this.deviceInUse(device.key)) return undefined;

    // A shared device already in use has had its counters charged: a further share does not
    // charge them again.
    const skipCounterCheck = allowMultipleAllocations && this.deviceCapacityInUse(device.key);
    const consumes = device.device.consumesCounters ?? [];
    let countersReserved = false;
    if (!skipCounterCheck && consumes.length > 0) {
      if (!this.checkAvailableCounters(device)) return undefined;
      countersReserved = true;
    }

    const baseRequestName = requestData.parentRequest ? requestData.parentRequest.name : request.name;
    const subRequestName = requestData.parentRequest ? request.name : '';
    const constraints = this.constraints[r.claimIndex] ?? [];
    let constraintsAdded = 0;
    let deviceMarked = false;
    let capacityInserted: ConsumedCapacity | undefined;
    let capacityEntryExisted = false;
    const results = this.result[r.claimIndex]!;
    const previous = results.length;
    let resultAdded = false;
    // rollbackDevice: every rejection after the counters were reserved, and backtracking.
    const rollback = (): void => {
      if (resultAdded) results.length = previous;
      if (capacityInserted) {
        removeCapacity(this.allocatingCapacity, device.key, capacityInserted);
        // Keep the entry of an earlier share: it marks the device as shared in this run.
        if (capacityEntryExisted && !this.allocatingCapacity.has(device.key))
          this.allocatingCapacity.set(device.key, new Map());
      }
      if (deviceMarked) this.allocatingDevices.get(device.key)?.delete(r.claimIndex);
      for (let i = constraintsAdded - 1; i >= 0; i--) constraints[i]!.remove(baseRequestName, subRequestName);
      if (countersReserved) this.deallocateCountersForDevice(device);
    };

    if (taintPreventsAllocation(device.device.taints, request.tolerations)) {
      rollback();
      return undefined;
    }

    for (const constraint of constraints) {
      if (!constraint.add(baseRequestName, subRequestName, device.device, device.id)) {
        rollback();
        if (must) {
          throw new AllocationError(
            `claim ${kobj(claim)}, request ${request.name}: cannot add device ${device.key} because a claim constraint would not be satisfied`,
          );
        }
        return undefined;
      }
      constraintsAdded++;
    }

    if (!allowMultipleAllocations) {
      let claimsAllocating = this.allocatingDevices.get(device.key);
      if (!claimsAllocating) this.allocatingDevices.set(device.key, (claimsAllocating = new Set()));
      claimsAllocating.add(r.claimIndex);
      deviceMarked = true;
    }

    let consumedCapacity: ConsumedCapacity | undefined;
    let shareID: string | undefined;
    if (
      !this.capacityFits(
        claim,
        request,
        device.id,
        device.device,
        this.allocatedCapacity(device.key),
        device.key,
        'rechecking',
      )
    ) {
      rollback();
      return undefined;
    }
    if (allowMultipleAllocations) {
      try {
        consumedCapacity = consumedCapacityFromRequest(request.capacity, device.device.capacity);
      } catch (err) {
        rollback();
        throw new AllocationError(
          `claim ${kobj(claim)}, request ${request.name}: computing consumed capacity for device ${device.key}: ${(err as Error).message}`,
        );
      }
      shareID = randomUUID();
      capacityEntryExisted = this.allocatingCapacity.has(device.key);
      insertCapacity(this.allocatingCapacity, device.key, consumedCapacity);
      capacityInserted = consumedCapacity;
    }

    results.push({
      request: request.name,
      parentRequest: requestData.parentRequest?.name ?? '',
      id: device.id,
      device: device.device,
      slice: device.slice,
      adminAccess: request.adminAccess ? true : undefined,
      shareID,
      consumedCapacity: consumedCapacity && consumedCapacity.size > 0 ? consumedCapacity : undefined,
    });
    resultAdded = true;
    return rollback;
  }

  /** CmpRequestOverCapacity of the allocator: a CapacityError is fatal for the attempt. */
  private capacityFits(
    claim: ResourceClaim,
    request: RequestAccessor,
    id: DeviceID,
    device: Device,
    current: ReadonlyMap<string, Quantity>,
    allocatingKey: string | undefined,
    verb: 'checking' | 'rechecking' = 'checking',
  ): boolean {
    try {
      return cmpRequestOverCapacity(
        current,
        request.capacity,
        device.capacity,
        allocatingKey === undefined ? undefined : this.allocatingCapacity.get(allocatingKey),
      );
    } catch (err) {
      if (!(err instanceof CapacityError)) throw err;
      // The "all devices" pass names the device alone, the search its ID, as upstream does.
      const name = allocatingKey === undefined ? id.device : deviceKey(id);
      throw new AllocationError(
        `claim ${kobj(claim)}, request ${request.name}: ${verb} capacity for device ${name}: ${err.message}`,
      );
    }
  }

  /** What completed allocations consume of a device (AggregatedCapacity), or nothing. */
  private allocatedCapacity(key: string): ReadonlyMap<string, Quantity> {
    return this.opts.aggregatedCapacity?.get(key) ?? EMPTY_CAPACITY;
  }

  private deviceInUse(key: string): boolean {
    return this.opts.allocatedDevices.has(key) || (this.allocatingDevices.get(key)?.size ?? 0) > 0;
  }

  /** deviceCapacityInUse: a share of the device is allocated, or being allocated in this run. */
  private deviceCapacityInUse(key: string): boolean {
    return (
      this.opts.aggregatedCapacity?.has(key) === true ||
      this.opts.allocatedSharedDevices?.has(key) === true ||
      this.allocatingCapacity.has(key)
    );
  }

  /** IsDeviceAllocated: dedicated, or holding a share. */
  private deviceAllocated(key: string): boolean {
    return (
      this.opts.allocatedDevices.has(key) ||
      this.opts.allocatedSharedDevices?.has(key) === true ||
      this.opts.aggregatedCapacity?.has(key) === true
    );
  }

  private allocatingDeviceForClaim(key: string, claimIndex: number): boolean {
    return this.allocatingDevices.get(key)?.has(claimIndex) ?? false;
  }

  /** checkAvailableCounters: records the device's consumption if every counter set still has room. */
  private checkAvailableCounters(device: DeviceWithID): boolean {
    const poolName = device.pool.pool;
    let available = this.availableCounters.get(poolName);
    if (!available) {
      available = new Map();
      for (const counterSet of device.pool.counterSets.values()) {
        const counters = new Map<string, Quantity>();
        for (const [name, c] of Object.entries(counterSet.counters ?? {}))
          counters.set(name, counterValue(c));
        available.set(counterSet.name, counters);
      }
      // Counters consumed by devices of completed allocations (never changes during Allocate).
      for (const slice of [
        ...device.pool.deviceSlicesTargetingNode,
        ...device.pool.deviceSlicesNotTargetingNode,
      ]) {
        for (const d of slice.spec.devices ?? []) {
          const key = deviceKey({ driver: slice.spec.driver, pool: slice.spec.pool.name, device: d.name });
          if (!this.deviceAllocated(key)) continue;
          for (const consumption of d.consumesCounters ?? []) {
            const set = available.get(consumption.counterSet);
            for (const [name, c] of Object.entries(consumption.counters ?? {})) {
              const existing = set?.get(name);
              if (set && existing) set.set(name, existing.sub(counterValue(c)));
            }
          }
        }
      }
      this.availableCounters.set(poolName, available);
    }

    let consumed = this.consumedCounters.get(poolName);
    if (!consumed) this.consumedCounters.set(poolName, (consumed = new Map<string, Map<string, Quantity>>()));
    for (const consumption of device.device.consumesCounters ?? []) {
      let set = consumed.get(consumption.counterSet);
      if (!set) consumed.set(consumption.counterSet, (set = new Map<string, Quantity>()));
      for (const [name, c] of Object.entries(consumption.counters ?? {})) {
        const existing = set.get(name);
        set.set(name, existing ? existing.add(counterValue(c)) : counterValue(c));
      }
    }

    for (const [setName, counters] of available) {
      const consumedSet = consumed.get(setName);
      for (const [name, value] of counters) {
        const used = consumedSet?.get(name) ?? Quantity.fromInt(0n);
        if (value.cmp(used) < 0) {
          this.deallocateCountersForDevice(device);
          return false;
        }
      }
    }
    return true;
  }

  private deallocateCountersForDevice(device: DeviceWithID): void {
    const consumed = this.consumedCounters.get(device.pool.pool);
    for (const consumption of device.device.consumesCounters ?? []) {
      const set = consumed?.get(consumption.counterSet);
      if (!set) continue;
      for (const [name, c] of Object.entries(consumption.counters ?? {})) {
        set.set(name, (set.get(name) ?? Quantity.fromInt(0n)).sub(counterValue(c)));
      }
    }
  }
}

const EMPTY_CAPACITY: ReadonlyMap<string, Quantity> = new Map();

/** ConsumedCapacityCollection.Insert. */
function insertCapacity(collection: Map<string, ConsumedCapacity>, key: string, add: ConsumedCapacity): void {
  const existing = collection.get(key);
  if (!existing) {
    collection.set(key, new Map(add));
    return;
  }
  for (const [name, value] of add) {
    const before = existing.get(name);
    existing.set(name, before ? before.add(value) : value);
  }
}

/** ConsumedCapacityCollection.Remove: the entry goes once nothing is left in it. */
function removeCapacity(collection: Map<string, ConsumedCapacity>, key: string, sub: ConsumedCapacity): void {
  const existing = collection.get(key);
  if (!existing) return;
  for (const [name, value] of sub) {
    const before = existing.get(name);
    if (before) existing.set(name, before.sub(value));
  }
  if ([...existing.values()].every((v) => v.sign() === 0)) collection.delete(key);
}

function deviceConfiguration(c: {
  opaque?: DeviceAllocationConfiguration['opaque'];
}): Pick<DeviceAllocationConfiguration, 'opaque'> {
  return c.opaque !== undefined ? { opaque: c.opaque } : {};
}

/** createNodeSelector: where the allocated devices are reachable, or undefined for everywhere. */
function createNodeSelector(results: readonly InternalDeviceResult[]): NodeSelector | undefined {
  const matchFields: NodeSelectorRequirement[] = [];
  const matchExpressions: NodeSelectorRequirement[] = [];
  for (const r of results) {
    const perDevice = r.slice.spec.perDeviceNodeSelection ?? false;
    const nodeName = perDevice ? r.device.nodeName : r.slice.spec.nodeName;
    const nodeSelector = perDevice ? r.device.nodeSelector : r.slice.spec.nodeSelector;
    if (nodeName) {
      return {
        nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [nodeName] }] }],
      };
    }
    if (!nodeSelector) continue;
    const terms = nodeSelector.nodeSelectorTerms;
    if (terms.length === 0) continue;
    if (terms.length > 1)
      throw new Error(`unsupported ResourceSlice.NodeSelector with ${terms.length} terms`);
    addNewRequirements(terms[0]?.matchFields ?? [], matchFields);
    addNewRequirements(terms[0]?.matchExpressions ?? [], matchExpressions);
  }
  if (matchFields.length === 0 && matchExpressions.length === 0) return undefined;
  return {
    nodeSelectorTerms: [
      {
        ...(matchExpressions.length > 0 ? { matchExpressions } : {}),
        ...(matchFields.length > 0 ? { matchFields } : {}),
      },
    ],
  };
}

function addNewRequirements(from: readonly NodeSelectorRequirement[], to: NodeSelectorRequirement[]): void {
  for (const requirement of from) {
    const values = new Set(requirement.values ?? []);
    const present = to.some(
      (existing) =>
        existing.key === requirement.key &&
        existing.operator === requirement.operator &&
        (existing.values ?? []).length === values.size &&
        (existing.values ?? []).every((v) => values.has(v)),
    );
    if (!present) to.push(requirement);
  }
}
