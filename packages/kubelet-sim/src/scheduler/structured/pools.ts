// The resource pools a node can allocate from: GatherPools in
// k8s.io/dynamic-resource-allocation/structured/internal/stable/pools_stable.go (1.37), with the
// stable allocator's features (partitionable devices on).
//
// Only the newest generation of a pool counts. A pool with fewer slices at that generation than its
// resourceSliceCount is incomplete (nothing is allocated from it, and "All" requests fail while it
// is); one with duplicate device names or broken counter references is invalid. Pools keep the order
// in which their first slice appears (Go iterates a map there, so upstream's order is random).

import type { CounterSet, ResourceSlice } from '../types.js';
import { nodeMatches, type NodeInfo } from './node-selector.js';

export interface Pool {
  driver: string;
  pool: string;
  /** `<driver>/<pool>`, as PoolID.String() prints it. */
  id: string;
  isIncomplete: boolean;
  isInvalid: boolean;
  invalidReason?: string;
  /** Slices with devices that the node can use (all of them unless per-device node selection). */
  deviceSlicesTargetingNode: ResourceSlice[];
  /** Slices of the pool whose devices are elsewhere: only their counter consumption matters. */
  deviceSlicesNotTargetingNode: ResourceSlice[];
  counterSets: Map<string, CounterSet>;
}

const poolKey = (driver: string, pool: string): string => `${driver}/${pool}`;

/** Throws an Error with upstream's wording when a node selector cannot be evaluated. */
export function gatherPools(slices: readonly ResourceSlice[], node: NodeInfo): Pool[] {
  const pools = new Map<string, ResourceSlice[]>();

  for (const slice of slices) {
    const spec = slice.spec;
    if ((spec.sharedCounters ?? []).length > 0) {
      // Always included: the pool's counters are needed regardless of node selection.
      addSlice(pools, slice);
    } else if (spec.nodeName || spec.allNodes || spec.nodeSelector) {
      let match: boolean;
      try {
        match = nodeMatches(node, spec.nodeName, spec.allNodes, spec.nodeSelector);
      } catch (err) {
        throw new Error(
          `failed to perform node selection for slice ${slice.metadata.name}: ${(err as Error).message}`,
          {
            cause: err,
          },
        );
      }
      if (match) addSlice(pools, slice);
    } else if (spec.perDeviceNodeSelection) {
      for (const device of spec.devices ?? []) {
        let match: boolean;
        try {
          match = nodeMatches(node, device.nodeName, device.allNodes, device.nodeSelector);
        } catch (err) {
          throw new Error(
            `failed to perform node selection for device ${device.name} in slice ${slice.metadata.name}: ${(err as Error).message}`,
            { cause: err },
          );
        }
        if (match) {
          addSlice(pools, slice);
          break;
        }
      }
    }
    // Else: nothing known is set (a future extension); ignored.
  }

  const result: Pool[] = [];
  for (const [key, slicesForPool] of pools) {
    const first = slicesForPool[0];
    if (!first) continue;
    const { driver } = first.spec;
    const { name, generation, resourceSliceCount } = first.spec.pool;
    if (slicesForPool.length === resourceSliceCount) {
      result.push(buildPool(driver, name, key, slicesForPool, undefined));
      continue;
    }
    // Slices of the same generation that were filtered out because they target other nodes may
    // still complete the pool; a newer generation elsewhere makes this one obsolete.
    const { obsolete, allSlicesForPool } = checkSlicesInPool(slices, driver, name, generation);
    if (obsolete) continue;
    if (allSlicesForPool.length !== resourceSliceCount) {
      result.push({
        driver,
        pool: name,
        id: key,
        isIncomplete: true,
        isInvalid: false,
        deviceSlicesTargetingNode: [],
        deviceSlicesNotTargetingNode: [],
        counterSets: new Map(),
      });
      continue;
    }
    result.push(buildPool(driver, name, key, slicesForPool, allSlicesForPool));
  }
  return result;
}

function addSlice(pools: Map<string, ResourceSlice[]>, slice: ResourceSlice): void {
  const key = poolKey(slice.spec.driver, slice.spec.pool.name);
  const existing = pools.get(key);
  const first = existing?.[0];
  if (!existing || !first) {
    pools.set(key, [slice]);
  } else if (slice.spec.pool.generation < first.spec.pool.generation) {
    // Out-dated.
  } else if (slice.spec.pool.generation > first.spec.pool.generation) {
    pools.set(key, [slice]);
  } else {
    existing.push(slice);
  }
}

function checkSlicesInPool(
  slices: readonly ResourceSlice[],
  driver: string,
  pool: string,
  generation: number,
): { obsolete: boolean; allSlicesForPool: ResourceSlice[] } {
  const allSlicesForPool: ResourceSlice[] = [];
  for (const slice of slices) {
    if (slice.spec.driver !== driver || slice.spec.pool.name !== pool) continue;
    if (slice.spec.pool.generation === generation) allSlicesForPool.push(slice);
    else if (slice.spec.pool.generation > generation) return { obsolete: true, allSlicesForPool: [] };
  }
  return { obsolete: false, allSlicesForPool };
}

function invalidPool(driver: string, pool: string, id: string, reason: string): Pool {
  return {
    driver,
    pool,
    id,
    isIncomplete: false,
    isInvalid: true,
    invalidReason: reason,
    deviceSlicesTargetingNode: [],
    deviceSlicesNotTargetingNode: [],
    counterSets: new Map(),
  };
}

function buildPool(
  driver: string,
  pool: string,
  id: string,
  slices: ResourceSlice[],
  allSlicesForPool: ResourceSlice[] | undefined,
): Pool {
  const deviceSlices = slices.filter((s) => (s.spec.sharedCounters ?? []).length === 0);
  const counterSetSlices = slices.filter((s) => (s.spec.sharedCounters ?? []).length > 0);

  const names = new Set<string>();
  for (const slice of deviceSlices) {
    for (const device of slice.spec.devices ?? []) {
      if (names.has(device.name))
        return invalidPool(driver, pool, id, `duplicate device name ${device.name}`);
      names.add(device.name);
    }
  }

  const counterSets = new Map<string, CounterSet>();
  for (const slice of counterSetSlices) {
    for (const counterSet of slice.spec.sharedCounters ?? []) {
      if (counterSets.has(counterSet.name))
        return invalidPool(driver, pool, id, `duplicate counter set name ${counterSet.name}`);
      counterSets.set(counterSet.name, counterSet);
    }
  }
  const consumptionError = validateDeviceCounterConsumption(counterSets, slices);
  if (consumptionError) return invalidPool(driver, pool, id, consumptionError);

  const base = {
    driver,
    pool,
    id,
    isIncomplete: false,
    isInvalid: false,
    deviceSlicesTargetingNode: deviceSlices,
    counterSets,
  };
  if (!allSlicesForPool || slices.length === allSlicesForPool.length) {
    return { ...base, deviceSlicesNotTargetingNode: [] };
  }
  const targeting = new Set(slices.map((s) => s.metadata.name));
  const notTargeting = allSlicesForPool.filter((s) => !targeting.has(s.metadata.name));
  const notTargetingError = validateDeviceCounterConsumption(counterSets, notTargeting);
  if (notTargetingError) return invalidPool(driver, pool, id, notTargetingError);
  return { ...base, deviceSlicesNotTargetingNode: notTargeting };
}

function validateDeviceCounterConsumption(
  counterSets: Map<string, CounterSet>,
  slices: readonly ResourceSlice[],
): string | undefined {
  for (const slice of slices) {
    for (const device of slice.spec.devices ?? []) {
      for (const consumption of device.consumesCounters ?? []) {
        const counterSet = counterSets.get(consumption.counterSet);
        if (!counterSet) return `counter set ${consumption.counterSet} not found`;
        for (const counterName of Object.keys(consumption.counters ?? {})) {
          if (!Object.hasOwn(counterSet.counters ?? {}, counterName))
            return `counter ${counterName} not found in counter set ${counterSet.name}`;
        }
      }
    }
  }
  return undefined;
}
