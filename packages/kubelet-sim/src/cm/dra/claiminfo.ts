// The DRA manager's claim info cache (pkg/kubelet/cm/dra claiminfo.go, 1.37): one ClaimInfo per
// ResourceClaim prepared (or being prepared) on this node, keyed `namespace/name`, with the pods
// that reference it and, per driver, the devices NodePrepareResources returned. It is checkpointed
// after every change; entries read back from the checkpoint are not `prepared` (the kubelet calls
// NodePrepareResources again if a pod needs them).

import type { ResourceClaimView } from './types.js';
import { entryJson, type DraCheckpointer } from './state/checkpoint.js';
import type { ClaimInfoState, DeviceState } from './state/state.js';

export class ClaimInfo implements ClaimInfoState {
  prepared = false;
  /** Bumped by every change of the checkpointed state (the cache re-encodes only changed entries). */
  version = 0;

  constructor(
    readonly claimUid: string,
    readonly claimName: string,
    readonly namespace: string,
    readonly podUids: Set<string>,
    readonly driverState: Map<string, { devices: DeviceState[] }>,
  ) {}

  /** newClaimInfoFromClaim: one (empty) driver state per driver in the allocation. */
  static fromClaim(claim: ResourceClaimView): ClaimInfo {
    const allocation = claim.status?.allocation;
    if (!allocation) throw new Error('not allocated');
    const drivers = new Map<string, { devices: DeviceState[] }>();
    for (const r of allocation.devices.results ?? []) drivers.set(r.driver, { devices: [] });
    return new ClaimInfo(
      claim.metadata.uid ?? '',
      claim.metadata.name ?? '',
      claim.metadata.namespace ?? '',
      new Set(),
      drivers,
    );
  }

  static fromState(s: ClaimInfoState): ClaimInfo {
    return new ClaimInfo(
      s.claimUid,
      s.claimName,
      s.namespace,
      new Set(s.podUids),
      new Map([...s.driverState].map(([d, st]) => [d, { devices: st.devices.map((x) => ({ ...x })) }])),
    );
  }

  addDevice(driver: string, device: DeviceState): void {
    const state = this.driverState.get(driver) ?? { devices: [] };
    state.devices.push(device);
    this.driverState.set(driver, state);
    this.version++;
  }

  addPodReference(podUid: string): void {
    if (this.podUids.has(podUid)) return;
    this.podUids.add(podUid);
    this.version++;
  }

  deletePodReference(podUid: string): void {
    if (this.podUids.delete(podUid)) this.version++;
  }

  /** cdiDevicesAsList: CDI IDs of the devices for `requestName` (all when empty). */
  cdiDevicesAsList(requestName: string): string[] {
    const out: string[] = [];
    for (const { devices } of this.driverState.values())
      for (const d of devices)
        if (!requestName || d.requestNames.length === 0 || d.requestNames.includes(requestName))
          out.push(...d.cdiDeviceIds);
    return out;
  }
}

const key = (namespace: string, name: string) => `${namespace}/${name}`;

export class ClaimInfoCache {
  private readonly claims = new Map<string, ClaimInfo>();
  /** Checkpoint writes in order, one at a time. */
  private writing: Promise<void> = Promise.resolve();
  /** Each entry's JSON as of its version: a write re-encodes only what changed. */
  private readonly encoded = new WeakMap<ClaimInfo, { version: number; json: string }>();

  constructor(private readonly checkpointer: DraCheckpointer) {}

  /** newClaimInfoCache: pre-populated from the checkpoint (entries are not prepared). */
  async load(): Promise<void> {
    this.claims.clear();
    for (const s of await this.checkpointer.getOrCreate()) {
      const info = ClaimInfo.fromState(s);
      this.claims.set(key(info.namespace, info.claimName), info);
    }
  }

  get(name: string, namespace: string): ClaimInfo | undefined {
    return this.claims.get(key(namespace, name));
  }

  add(info: ClaimInfo): void {
    this.claims.set(key(info.namespace, info.claimName), info);
  }

  delete(name: string, namespace: string): void {
    this.claims.delete(key(namespace, name));
  }

  all(): ClaimInfo[] {
    return [...this.claims.values()];
  }

  hasPodReference(podUid: string): boolean {
    return this.all().some((c) => c.podUids.has(podUid));
  }

  claimNamesForPod(podUid: string): string[] {
    return this.all()
      .filter((c) => c.podUids.has(podUid))
      .map((c) => c.claimName);
  }

  /** syncToCheckpoint: the whole cache (the kubelet's map order is random; here namespace/name). */
  syncToCheckpoint(): Promise<void> {
    const entries = [...this.claims.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const snapshot = entries.map(([, c]) => {
      let e = this.encoded.get(c);
      if (e?.version !== c.version) {
        e = { version: c.version, json: entryJson(c) };
        this.encoded.set(c, e);
      }
      return e.json;
    });
    const run = this.writing.then(() => this.checkpointer.storeEncoded(snapshot));
    this.writing = run.catch(() => undefined);
    return run;
  }
}
