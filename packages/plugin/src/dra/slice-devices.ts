// How an advertised device (the device source + exclusion + fault overlay, as DeviceState gives
// it) becomes a resource.k8s.io/v1 Device in a ResourceSlice: its DNS-label name, the standard NUMA
// attribute, vendor attributes and capacity, sharing (replicas) as consumable capacity, and, when
// enabled, a device taint while it is unhealthy (the DRA counterpart of allocatable dropping).
import { createHash } from 'node:crypto';
import type { PluginDevice } from '../types.js';
import { Quantity } from '@plugboard/apimachinery';
import {
  STANDARD_ATTRIBUTE_NUMA_NODE,
  STANDARD_ATTRIBUTE_PCI_BUS_ID,
  type DeviceAttribute,
  type CounterSet,
  type DeviceCapacity,
  type DeviceTaint,
  type DeviceTaintEffect,
  type SliceDevice,
} from './api-types.js';

/** Capacity name of a shared device: how many allocations it takes (replicas). */
export const SHARES_CAPACITY = 'shares';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * A device's name in the ResourceSlice, which must be a DNS label (lower case, digits, '-', at most
 * 63 characters). An ID that is one already is used as is (`gpu-0`); any other is made into one
 * and given a short hash of the ID, so the name is stable for the device's life and two IDs never
 * share a name (`0000:3b:00.0` → `0000-3b-00-0-5d1a2c`, `ttyUSB0` → `ttyusb0-8f0a3e`).
 */
export function draDeviceName(id: string): string {
  if (DNS_LABEL.test(id) && id.length <= 63) return id;
  let name = hashedNames.get(id);
  if (name === undefined) {
    // Health messages and slices name every device each time: hash an ID once.
    if (hashedNames.size >= 65_536) hashedNames.clear();
    name = hashedName(id);
    hashedNames.set(id, name);
  }
  return name;
}

const hashedNames = new Map<string, string>();

function hashedName(id: string): string {
  const base = id
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 55)
    .replace(/-+$/, '');
  const hash = createHash('sha256').update(id).digest('hex').slice(0, 6);
  return base ? `${base}-${hash}` : `dev-${hash}`;
}

export interface DeviceTaintOptions {
  effect: Exclude<DeviceTaintEffect, 'None'>;
  /** Taint key (a label name); default `<driver>/unhealthy`. */
  key: string;
}

export interface SliceDeviceOptions {
  /** Vendor attributes of a device (unqualified names are in the driver's domain). */
  attributes?: (device: PluginDevice) => Record<string, DeviceAttribute>;
  /**
   * Vendor capacity of a device: a quantity ("80Gi"), or a capacity with a requestPolicy for a
   * device shared by `allowMultipleAllocations`.
   */
  capacity?: (device: PluginDevice) => Record<string, string | DeviceCapacity>;
  /** Every device takes several allocations at once, each consuming part of its capacity. */
  allowMultipleAllocations?: boolean;
  /** The device ID is a PCI address: publish it as `resource.kubernetes.io/pciBusID`. */
  pciBusIdFromId?: boolean;
  /** > 1: the device takes that many allocations at once (consumable capacity `shares`). */
  replicas: number;
  /** Taint unhealthy devices (null: never). */
  taint: DeviceTaintOptions | null;
  /** Whether the overlay holds a fault on the device (taint value `fault`, else `unhealthy`). */
  faulted: (id: string) => boolean;
  /** The taint a fault asked for on the device (DraDriver.injectFault's `taint`), if any. */
  faultTaint?: (id: string) => DeviceTaint | null;
}

/** Value of a fault's own taint (key `<driver>/fault`). */
export const FAULT_TAINT_VALUE = 'simulated';

/** RFC 3339 in whole seconds, as the API server stores `timeAdded`. */
export function wholeSecondsUtc(iso: string): string {
  return new Date(iso).toISOString().replace(/\.\d+Z$/, 'Z');
}

export function sliceDevice(device: PluginDevice, options: SliceDeviceOptions): SliceDevice {
  const attributes: Record<string, DeviceAttribute> = { id: { string: device.id } };
  // KEP-6072's scalar form: the device's (first) NUMA node; the list form needs an alpha gate.
  const numa = device.numaNodes[0];
  if (numa !== undefined) attributes[STANDARD_ATTRIBUTE_NUMA_NODE] = { int: numa };
  if (options.pciBusIdFromId) attributes[STANDARD_ATTRIBUTE_PCI_BUS_ID] = { string: device.id };
  Object.assign(attributes, options.attributes?.(device));
  const capacity: Record<string, DeviceCapacity> = {};
  for (const [name, value] of Object.entries(options.capacity?.(device) ?? {}))
    capacity[name] = typeof value === 'string' ? { value } : value;
  const out: SliceDevice = { name: draDeviceName(device.id), attributes };
  if (options.allowMultipleAllocations) out.allowMultipleAllocations = true;
  if (options.replicas > 1) {
    out.allowMultipleAllocations = true;
    capacity[SHARES_CAPACITY] = {
      value: String(options.replicas),
      requestPolicy: { default: '1', validRange: { min: '1', max: String(options.replicas) } },
    };
  }
  if (Object.keys(capacity).length > 0) out.capacity = capacity;
  const taints: DeviceTaint[] = [];
  if (options.taint && device.health === 'Unhealthy') {
    taints.push({
      key: options.taint.key,
      value: options.faulted(device.id) ? 'fault' : 'unhealthy',
      effect: options.taint.effect,
      timeAdded: wholeSecondsUtc(device.since),
    });
  }
  const faultTaint = options.faultTaint?.(device.id);
  if (faultTaint) taints.push(faultTaint);
  if (taints.length > 0) out.taints = taints;
  return out;
}

/** One partition of a device (KEP-4815): a device of its own consuming part of the device's counters. */
export interface DevicePartition {
  /** Appended to the device's name: `<device>-<suffix>` (the whole must be a DNS label). */
  suffix: string;
  /** What the partition consumes of the device's counters (quantities by counter name). */
  consumes: Record<string, string>;
  /** Attributes of the partition, besides the device's own. */
  attributes?: Record<string, DeviceAttribute>;
}

export interface PartitionOptions {
  /** The counters a device holds (its counter set, named after the device), as quantities. */
  counters: (device: PluginDevice) => Record<string, string>;
  /** The partitions published for a device, in allocation-preference order. */
  partitions: (device: PluginDevice) => DevicePartition[];
}

/** The counter set of a partitioned device: named after its device, one counter per name. */
export function deviceCounterSet(device: PluginDevice, options: PartitionOptions): CounterSet {
  const counters = Object.fromEntries(
    Object.entries(options.counters(device)).map(([name, value]) => [name, { value }]),
  );
  return { name: draDeviceName(device.id), counters };
}

/**
 * The partitions of a device as ResourceSlice devices: the device's own entry (attributes,
 * capacity, taints) under `<device>-<suffix>`, with the partition's attributes and its
 * consumesCounters on the device's counter set.
 */
export function partitionSliceDevices(
  base: SliceDevice,
  device: PluginDevice,
  options: PartitionOptions,
): SliceDevice[] {
  return options.partitions(device).map((p) => {
    const { name: _name, ...rest } = base;
    return {
      name: `${base.name}-${p.suffix}`,
      ...rest,
      attributes: { ...base.attributes, ...p.attributes },
      consumesCounters: [
        {
          counterSet: base.name,
          counters: Object.fromEntries(Object.entries(p.consumes).map(([name, value]) => [name, { value }])),
        },
      ],
    };
  });
}

/**
 * Even partitions of a device's counters: for each split n, n partitions each consuming 1/n of
 * every counter (rounded down to whole units), named `whole`, `half-<i>`, `quarter-<i>` or
 * `<n>th-<i>`, with the attribute `partition` (`whole`, `half`, `quarter`, `<n>th`) to select by.
 * `evenPartitions({ memory: '40Gi' }, [1, 2, 4])`: a whole, two halves and four quarters.
 */
export function evenPartitions(
  counters: Record<string, string>,
  splits: readonly number[],
): (device: PluginDevice) => DevicePartition[] {
  const parts: DevicePartition[] = [];
  for (const n of splits) {
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`a split must be a positive integer, got ${n}`);
    const kind = n === 1 ? 'whole' : n === 2 ? 'half' : n === 4 ? 'quarter' : `${n}th`;
    const consumes = Object.fromEntries(
      Object.entries(counters).map(([name, value]) => {
        const q = Quantity.parse(value);
        return [name, new Quantity(q.value() / BigInt(n), 0, false, q.format).canonicalString()];
      }),
    );
    for (let i = 0; i < n; i++) {
      parts.push({
        suffix: n === 1 ? kind : `${kind}-${i}`,
        consumes,
        attributes: { partition: { string: kind } },
      });
    }
  }
  return () => parts;
}
