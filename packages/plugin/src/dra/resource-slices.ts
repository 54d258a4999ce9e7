// Publishes one node's devices as resource.k8s.io/v1 ResourceSlices and keeps them in sync: the
// counterpart of k8s.io/dynamic-resource-allocation/resourceslice's Controller for one node-local
// pool, with the same rules. Slices are owned by the Node, selected with
// `spec.driver=<driver>,spec.nodeName=<node>`, named `<index as 5+ hex digits>-<driver>-<node>-`
// (generateName) so the allocator's first-fit order follows the device order; the pool generation
// is bumped only when more than one slice must change or a slice is added (one changed slice is
// updated in place under the same generation); slices of an older generation, of another pool or
// with an index out of range are deleted with UID and resourceVersion preconditions. A taint's
// timeAdded is compared as upstream's controller does it (copyTaintTimeAdded, DevicesDeepEqual): the
// API server stamps every taint stored without one (SetDefaults_DeviceTaint), so a taint the driver
// leaves without a time takes the stored one, and a time within a second of the stored one counts
// as that one — otherwise the stamp would make every sync write the slice again. (DraDriver's own
// taints carry their time: when the device became unhealthy, when the fault asked for the taint.)
// Differences from upstream, on purpose: no informer — the slices last listed or written are kept
// and listed again after any error and every `resyncMs` (upstream re-syncs 30 s after an informer
// event, the same bound for repairing someone else's change); changes arriving while a sync runs
// are coalesced into one more sync; API errors back off exponentially and are reported, never
// thrown.
import type { Logger } from 'pino';
import { Backoff } from '@plugboard/apimachinery';
import { PluginError } from '../errors.js';
import {
  RESOURCE_API_VERSION,
  SLICE_SELECTOR_DRIVER,
  SLICE_SELECTOR_NODE_NAME,
  type CounterSet,
  type DeviceTaint,
  type ResourcePool,
  type ResourceSlice,
  type SliceDevice,
} from './api-types.js';
import { httpStatusOf, type DraKubeApi } from './kube-api.js';

/** resourceSliceIndexMinLength */
const INDEX_MIN_LENGTH = 5;

export interface PublicationStats {
  /** The pool generation last published (0 before the first publication). */
  generation: number;
  /** Names of the slices as last published, in index order. */
  slices: string[];
  /** Requests made since start, by kind. */
  requests: { getNode: number; list: number; create: number; update: number; delete: number };
  lastPublishedAt: string | null;
  /** The last error; null once a publication succeeds again. */
  error: string | null;
}

export interface PublishedEvent {
  generation: number;
  slices: string[];
  created: number;
  updated: number;
  deleted: number;
  durationMs: number;
}

export interface ResourceSlicePublisherOptions {
  driverName: string;
  nodeName: string;
  poolName: string;
  kube: DraKubeApi;
  /** The devices to publish, in allocation-preference order. */
  devices: () => SliceDevice[];
  /**
   * Counter sets of partitionable devices (KEP-4815). Since 1.35 a slice holds counter sets or
   * devices, never both: when there are any, they are published in a slice of their own, index 0
   * of the pool, and the devices that consume them follow in the next slices (counter sets
   * resolve pool-wide).
   */
  sharedCounters?: () => CounterSet[];
  /** Devices per slice (the API allows 128, or 64 when any device has taints). */
  maxDevicesPerSlice: number;
  logger: Logger;
  /** Backoff after an API error (default 250 ms doubling up to 30 s). */
  retry?: { initialMs?: number; maxMs?: number };
  /** List again and repair at this interval (default 30 s, upstream's sync delay). */
  resyncMs?: number;
  onPublished?: (event: PublishedEvent) => void;
  onError?: (event: { error: string; retryInMs: number }) => void;
}

/** Index prefix length for `count` slices (getIndexLength). */
export function indexLength(count: number): number {
  return Math.max(INDEX_MIN_LENGTH, Math.max(0, count - 1).toString(16).length);
}

/** `00003` for index 3 of a short pool (encodeIndex). */
export function encodeIndex(index: number, length: number): string {
  return index.toString(16).padStart(length, '0');
}

/** The index encoded at the start of a slice name, or -1 (decodeIndex). */
export function decodeIndex(name: string, length: number): number {
  const dash = name.indexOf('-');
  if (dash !== length) return -1;
  const prefix = name.slice(0, dash);
  return /^[0-9a-f]+$/.test(prefix) ? parseInt(prefix, 16) : -1;
}

/** JSON with object keys sorted: equal for semantically equal devices whatever the key order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}

/**
 * The canonical form of each device object, computed once: the driver hands out the same object
 * for a device that did not change, and a slice read or written once keeps its objects, so a
 * fault on one of 1,024 devices serialises one device, not the pool.
 */
const canonicalDevices = new WeakMap<SliceDevice, string>();

function canonicalList(devices: readonly SliceDevice[]): string {
  let out = '[';
  for (const d of devices) {
    let c = canonicalDevices.get(d);
    if (c === undefined) {
      c = canonical(d);
      canonicalDevices.set(d, c);
    }
    out += c + ',';
  }
  return out + ']';
}

const sameTaint = (a: DeviceTaint, b: DeviceTaint): boolean =>
  a.key === b.key && (a.value ?? '') === (b.value ?? '') && a.effect === b.effect;

/** deviceTaintEqual's tolerance: round trips may round a time to the second. NaN (unparsable): no. */
const withinASecond = (a: string, b: string): boolean => Math.abs(Date.parse(a) - Date.parse(b)) <= 1000;

/**
 * The desired device with the taint times of the stored one (same name, same slice): a taint
 * without timeAdded takes the time of the stored taint with the same key, value and effect
 * (copyTaintTimeAdded: the time the API server stamped, kept however often the slice is written
 * again), and a time within a second of that one becomes it (DevicesDeepEqual counts them equal).
 * The device itself when nothing changes.
 */
function withStoredTaintTimes(device: SliceDevice, stored: SliceDevice | undefined): SliceDevice {
  const storedTaints = stored?.taints;
  if (!device.taints || !storedTaints) return device;
  let taints: DeviceTaint[] | null = null;
  for (const [j, taint] of device.taints.entries()) {
    const old = storedTaints.find((t) => sameTaint(t, taint))?.timeAdded;
    if (old === undefined || old === taint.timeAdded) continue;
    if (taint.timeAdded !== undefined && !withinASecond(taint.timeAdded, old)) continue;
    taints ??= [...device.taints];
    taints[j] = { ...taint, timeAdded: old };
  }
  return taints ? { ...device, taints } : device;
}

/**
 * Per desired device, the stored device it was last resolved against and the result: an unchanged
 * device against an unchanged slice is the same object again, whose canonical form is cached.
 */
const resolvedDevices = new WeakMap<SliceDevice, { stored: SliceDevice | undefined; device: SliceDevice }>();
/** A stored slice's devices by name (the known slices are kept as objects between syncs). */
const storedDevicesByName = new WeakMap<ResourceSlice, Map<string, SliceDevice>>();

/** The desired devices of one slice with the stored slice's taint times (withStoredTaintTimes). */
function withStoredSliceTaintTimes(desired: SliceDevice[], stored: ResourceSlice): SliceDevice[] {
  if (!desired.some((d) => d.taints)) return desired;
  let byName = storedDevicesByName.get(stored);
  if (byName === undefined) {
    byName = new Map((stored.spec.devices ?? []).map((d) => [d.name, d]));
    storedDevicesByName.set(stored, byName);
  }
  const names = byName;
  return desired.map((device) => {
    if (!device.taints) return device;
    const storedDevice = names.get(device.name);
    const hit = resolvedDevices.get(device);
    if (hit && hit.stored === storedDevice) return hit.device;
    const resolved = withStoredTaintTimes(device, storedDevice);
    resolvedDevices.set(device, { stored: storedDevice, device: resolved });
    return resolved;
  });
}

function samePool(a: ResourcePool, b: ResourcePool): boolean {
  return a.name === b.name && a.generation === b.generation && a.resourceSliceCount === b.resourceSliceCount;
}

export class ResourceSlicePublisher {
  readonly #o: ResourceSlicePublisherOptions;
  readonly #selector: string;
  #ownerUid: string | null = null;
  /** The node's slices as last listed or written; null: list before the next sync. */
  #known: ResourceSlice[] | null = null;
  /**
   * A resync asked for a fresh list. A flag, not `#known = null`: a resync timer firing while a sync
   * awaits a write must not pull the list from under it (the write then failed on a null list after
   * it had reached the server, and the sync never reported it as published).
   */
  #relist = false;
  #running: Promise<void> | null = null;
  #dirty = false;
  #scheduled = false;
  #retryTimer: NodeJS.Timeout | null = null;
  #resyncTimer: NodeJS.Timeout | null = null;
  /** The retry backoff of the current run of failures; null after a success. */
  #retry: Backoff | null = null;
  #stopped = true;
  #stats: PublicationStats = {
    generation: 0,
    slices: [],
    requests: { getNode: 0, list: 0, create: 0, update: 0, delete: 0 },
    lastPublishedAt: null,
    error: null,
  };

  constructor(options: ResourceSlicePublisherOptions) {
    this.#o = options;
    this.#selector = `${SLICE_SELECTOR_DRIVER}=${options.driverName},${SLICE_SELECTOR_NODE_NAME}=${options.nodeName}`;
  }

  /** Publishes now (in the background) and keeps publishing on `update()` and every resync. */
  start(): void {
    this.#stopped = false;
    this.#resyncTimer = setInterval(() => this.resync(), this.#o.resyncMs ?? 30_000);
    this.#resyncTimer.unref();
    this.update();
  }

  /** Stops publishing; the slices stay (see DraDriver.stop). Resolves once a running sync ends. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#retryTimer) clearTimeout(this.#retryTimer);
    if (this.#resyncTimer) clearInterval(this.#resyncTimer);
    this.#retryTimer = null;
    this.#resyncTimer = null;
    await this.#running;
  }

  stats(): PublicationStats {
    return { ...this.#stats, slices: [...this.#stats.slices], requests: { ...this.#stats.requests } };
  }

  /** The devices changed: sync once this synchronous block ends (changes in one block, one sync). */
  update(): void {
    if (this.#stopped) return;
    this.#dirty = true;
    if (this.#scheduled || this.#retryTimer) return;
    this.#scheduled = true;
    queueMicrotask(() => {
      this.#scheduled = false;
      this.#kick();
    });
  }

  /** Forget what is known and list again (someone else may have changed or deleted slices). */
  resync(): void {
    this.#relist = true;
    this.update();
  }

  #kick(): void {
    if (this.#running || this.#stopped || !this.#dirty) return;
    this.#dirty = false;
    this.#running = this.#syncOnce()
      .then(
        () => {
          this.#retry = null;
        },
        (err: unknown) => this.#failed(err),
      )
      .finally(() => {
        this.#running = null;
        if (this.#dirty && !this.#retryTimer) this.#kick();
      });
  }

  #failed(err: unknown): void {
    const error = PluginError.from(err).message;
    // Whatever happened, what is on the server is unknown now.
    this.#known = null;
    if (httpStatusOf(err) === 404 && error.startsWith('read Node')) this.#ownerUid = null;
    const cap = this.#o.retry?.maxMs ?? 30_000;
    // The first delay is capped too (upstream's Step does not cap it).
    const duration = Math.min(this.#o.retry?.initialMs ?? 250, cap);
    this.#retry ??= new Backoff({ duration, factor: 2, steps: Infinity, cap });
    const delayMs = this.#retry.step();
    this.#stats.error = error;
    this.#o.logger.warn({ err: error, retryInMs: delayMs }, 'publishing ResourceSlices failed');
    this.#o.onError?.({ error, retryInMs: delayMs });
    if (this.#stopped) return;
    this.#dirty = true;
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = null;
      this.#kick();
    }, delayMs);
    this.#retryTimer.unref();
  }

  async #syncOnce(): Promise<void> {
    const started = performance.now();
    const o = this.#o;
    const requests = this.#stats.requests;
    if (this.#ownerUid === null) {
      requests.getNode++;
      this.#ownerUid = await o.kube.readNodeUid(o.nodeName);
    }
    if (this.#known === null || this.#relist) {
      this.#relist = false;
      requests.list++;
      this.#known = await o.kube.listResourceSlices(this.#selector);
    }
    const devices = o.devices();
    const counterSets = o.sharedCounters?.() ?? [];
    // An empty pool still gets one (empty) slice: "empty pool" says the driver runs and has nothing.
    const chunks: SliceDevice[][] = [];
    for (let i = 0; i < devices.length; i += o.maxDevicesPerSlice)
      chunks.push(devices.slice(i, i + o.maxDevicesPerSlice));
    if (chunks.length === 0 && counterSets.length === 0) chunks.push([]);
    // The counter slice is index 0; chunks[0] stays an (unused) device list so indices line up.
    const counterSlice = counterSets.length > 0;
    if (counterSlice) chunks.unshift([]);
    const prefixLength = indexLength(chunks.length);

    const existing = this.#known;
    const ours = existing.filter((s) => s.spec.pool.name === o.poolName);
    let generation = ours.reduce((max, s) => Math.max(max, s.spec.pool.generation), 0);
    const matched = new Map<number, ResourceSlice>();
    const obsolete = existing.filter((s) => s.spec.pool.name !== o.poolName);
    for (const slice of ours) {
      const index = decodeIndex(slice.metadata.name ?? '', prefixLength);
      if (
        slice.spec.pool.generation < generation ||
        index < 0 ||
        index >= chunks.length ||
        matched.has(index)
      ) {
        obsolete.push(slice);
      } else {
        matched.set(index, slice);
      }
    }
    const pool = (): ResourcePool => ({ name: o.poolName, generation, resourceSliceCount: chunks.length });
    const changed = new Set<number>();
    for (const [i, slice] of matched) {
      // What an update of this slice writes (upstream: copyTaintTimeAdded), and what it compares.
      if (counterSlice && i === 0) {
        if (
          !samePool(slice.spec.pool, pool()) ||
          slice.spec.devices !== undefined ||
          canonical(slice.spec.sharedCounters ?? []) !== canonical(counterSets)
        ) {
          changed.add(i);
        }
        continue;
      }
      const desired = withStoredSliceTaintTimes(chunks[i]!, slice);
      chunks[i] = desired;
      if (
        !samePool(slice.spec.pool, pool()) ||
        slice.spec.sharedCounters !== undefined ||
        canonicalList(slice.spec.devices ?? []) !== canonicalList(desired)
      ) {
        changed.add(i);
      }
    }
    const created = chunks.length - matched.size;
    let bumped = false;
    if (created > 0 || changed.size > 1) {
      generation++;
      bumped = true;
    }
    if (obsolete.length === 0 && created === 0 && changed.size === 0) {
      // In sync already (e.g. after a restart of the driver).
      this.#stats.generation = generation;
      this.#stats.slices = [...matched].sort(([a], [b]) => a - b).map(([, s]) => s.metadata.name ?? '');
      this.#stats.error = null;
      return;
    }
    const content = (i: number): Pick<ResourceSlice['spec'], 'devices' | 'sharedCounters'> =>
      counterSlice && i === 0 ? { sharedCounters: counterSets } : { devices: chunks[i] ?? [] };
    const next: ResourceSlice[] = [];
    // Delete first: better to withdraw devices the driver no longer has even if the new slices fail.
    let deleted = 0;
    for (const slice of obsolete) {
      requests.delete++;
      const gone = await o.kube.deleteResourceSlice(slice.metadata.name ?? '', {
        uid: slice.metadata.uid ?? '',
        resourceVersion: slice.metadata.resourceVersion ?? '',
      });
      if (gone) deleted++;
      this.#known = this.#known.filter((s) => s !== slice);
    }
    let updated = 0;
    for (const [i, slice] of [...matched].sort(([a], [b]) => a - b)) {
      if (!changed.has(i) && !bumped) {
        next[i] = slice;
        continue;
      }
      requests.update++;
      const { devices: _devices, sharedCounters: _counters, ...rest } = slice.spec;
      const written = await o.kube.replaceResourceSlice({
        ...slice,
        apiVersion: RESOURCE_API_VERSION,
        kind: 'ResourceSlice',
        spec: { ...rest, pool: pool(), nodeName: o.nodeName, ...content(i) },
      });
      updated++;
      next[i] = written;
      this.#known = this.#known.map((s) => (s === slice ? written : s));
    }
    for (let i = 0; i < chunks.length; i++) {
      if (matched.has(i)) continue;
      requests.create++;
      const written = await o.kube.createResourceSlice({
        apiVersion: RESOURCE_API_VERSION,
        kind: 'ResourceSlice',
        metadata: {
          generateName: `${encodeIndex(i, prefixLength)}-${o.driverName}-${o.nodeName}-`,
          ownerReferences: [
            { apiVersion: 'v1', kind: 'Node', name: o.nodeName, uid: this.#ownerUid, controller: true },
          ],
        },
        spec: { driver: o.driverName, pool: pool(), nodeName: o.nodeName, ...content(i) },
      });
      next[i] = written;
      this.#known = [...this.#known, written];
    }
    const durationMs = performance.now() - started;
    this.#stats.generation = generation;
    this.#stats.slices = next.map((s) => s.metadata.name ?? '');
    this.#stats.lastPublishedAt = new Date().toISOString();
    this.#stats.error = null;
    o.logger.info(
      { generation, slices: next.length, created, updated, deleted, durationMs },
      'ResourceSlices published',
    );
    o.onPublished?.({ generation, slices: this.#stats.slices, created, updated, deleted, durationMs });
  }
}
