// The kubelet's DRA manager (pkg/kubelet/cm/dra manager.go, 1.37): it prepares a pod's
// ResourceClaims before the pod's sandbox is created (PrepareResources: NodePrepareResources per
// driver with the claims' identities only, the results kept in the claim info cache and the
// `dra_manager_state` checkpoint), hands containers their CDI devices (GetResources), reports
// them to PodResources (GetContainerClaimInfos) and their health to the pod status
// (UpdateAllocatedResourcesStatus, from the drivers' NodeWatchResources streams), and unprepares
// a pod's claims once it has stopped (UnprepareResources, NodeUnprepareResources once no other pod
// on the node uses the claim). Error texts are the kubelet's, wrapped the way it wraps them.
// A pod's special claim for extended resources backed by DRA
// (`status.extendedResourceClaimStatus`, DRAExtendedResource) is prepared like a claim the pod
// names, and reaches the containers its request mappings name.
//
// Not a Topology Manager hint provider: a 1.37 kubelet registers only the device, CPU and memory
// managers as hint providers; DRA devices' NUMA placement is the scheduler's (matchAttribute).

import type { Logger } from 'pino';
import { drahealthv1 } from '@plugboard/proto';
import { newCheckpointManager } from '../../checkpointmanager/checkpoint-manager.js';
import type { ObjectStore } from '../../apiserver/object-store.js';
import type { PluginHandler } from '../../pluginmanager/plugin-watcher.js';
import { goGrpcErrorText } from '../../util/grpc-errors.js';
import { ClaimInfo, ClaimInfoCache } from './claiminfo.js';
import { DEFAULT_HEALTH_TIMEOUT_MS, HealthInfoCache, truncateHealthMessage } from './healthinfo.js';
import type { DraClaimRef, DRAPlugin, HealthResponse } from './plugin/dra-plugin.js';
import { DEFAULT_WIPING_DELAY_MS, DRAPluginManager, type DriverView } from './plugin/dra-plugin-manager.js';
import {
  baseRequestRef,
  claimName,
  extendedResourceRequestNames,
  isForPod,
  isReservedForPod,
} from './resourceclaim.js';
import { DraCheckpointer } from './state/checkpoint.js';
import type { DeviceHealthStatus } from './state/state.js';
import type { ContainerClaim, DraContainer, DraPod, PodResourceClaim, ResourceClaimView } from './types.js';

/** The pod's claims with the special claim of its extended resources last, as PrepareResources lists them. */
function podResourceClaims(pod: DraPod): PodResourceClaim[] {
  const ext = pod.extendedResourceClaimStatus;
  return ext
    ? [...pod.resourceClaims, { name: '', resourceClaimName: ext.resourceClaimName }]
    : pod.resourceClaims;
}

export interface DraManagerOptions {
  nodeName: string;
  /** The kubelet's root directory: `dra_manager_state` and `dra_health_state` live there. */
  stateDir: string;
  claims: ObjectStore;
  slices: ObjectStore;
  wipingDelayMs?: number;
  healthStreamRetryMs?: number;
  logger: Logger;
  /** Registered drivers or their connections changed. */
  onDriversChanged?: () => void;
}

/** One `allocatedResourcesStatus` entry (v1.ResourceStatus). */
export interface DraResourceStatus {
  name: string;
  resources: { resourceID: string; health: DeviceHealthStatus; message?: string }[];
}

/** What PodResources reports for one container (podresources v1 DynamicResource). */
export interface DynamicResourceView {
  claimName: string;
  claimNamespace: string;
  claimResources: {
    cdiDevices: { name: string }[];
    driverName: string;
    poolName: string;
    deviceName: string;
    shareId?: string;
  }[];
}

export interface DraClaimView {
  namespace: string;
  name: string;
  uid: string;
  prepared: boolean;
  podUids: string[];
  devices: {
    driver: string;
    pool: string;
    device: string;
    requestNames: string[];
    cdiDeviceIds: string[];
    shareId: string | null;
    health: DeviceHealthStatus;
    message: string;
  }[];
}

export interface DraStateView {
  drivers: DriverView[];
  claims: DraClaimView[];
}

const HEALTH: Record<number, DeviceHealthStatus> = {
  [drahealthv1.HealthStatus.HEALTHY]: 'Healthy',
  [drahealthv1.HealthStatus.UNHEALTHY]: 'Unhealthy',
};

export class DraManager {
  private readonly checkpoints;
  private readonly cache: ClaimInfoCache;
  private readonly health: HealthInfoCache;
  private plugins: DRAPluginManager;
  private readonly expiryTimers = new Map<string, NodeJS.Timeout>();
  private readonly podHealthWatchers = new Set<(podUids: string[]) => void>();
  private readonly log: Logger;

  constructor(private readonly o: DraManagerOptions) {
    this.log = o.logger.child({ component: 'dra-manager' });
    this.checkpoints = newCheckpointManager(o.stateDir);
    this.cache = new ClaimInfoCache(new DraCheckpointer(this.checkpoints));
    this.health = new HealthInfoCache(this.checkpoints);
    this.plugins = this.newPluginManager();
  }

  private newPluginManager(): DRAPluginManager {
    return new DRAPluginManager({
      nodeName: this.o.nodeName,
      wipeResourceSlices: (driver) => this.wipeResourceSlices(driver),
      streamHandler: {
        onHealth: (driver, res) => void this.handleHealth(driver, res),
        onHealthStreamEnded: (driver) => void this.handleHealthStreamEnded(driver),
      },
      wipingDelayMs: this.o.wipingDelayMs ?? DEFAULT_WIPING_DELAY_MS,
      ...(this.o.healthStreamRetryMs !== undefined
        ? { healthStreamRetryMs: this.o.healthStreamRetryMs }
        : {}),
      logger: this.o.logger,
      ...(this.o.onDriversChanged ? { onChange: this.o.onDriversChanged } : {}),
    });
  }

  /** NewManager + Start: the caches from their checkpoints, then the plugin manager's start-up wipe. */
  async start(): Promise<void> {
    await this.cache.load();
    await this.health.load();
    this.plugins.start();
  }

  /**
   * The plugin watcher's handler for `DRAPlugin` sockets (GetWatcherHandler), stable across
   * restarts (each restart has a new plugin manager behind it).
   */
  watcherHandler(): PluginHandler {
    return {
      validatePlugin: (name, endpoint, versions) => this.plugins.validatePlugin(name, endpoint, versions),
      registerPlugin: (name, endpoint, versions) => this.plugins.registerPlugin(name, endpoint, versions),
      deRegisterPlugin: (name, endpoint) => this.plugins.deRegisterPlugin(name, endpoint),
    };
  }

  /** A kubelet restart: plugins and connections are forgotten, the caches come back from disk. */
  async restart(): Promise<void> {
    this.stopTimers();
    this.plugins.stop();
    this.plugins = this.newPluginManager();
    await this.start();
  }

  stop(): void {
    this.stopTimers();
    this.plugins.stop();
  }

  private stopTimers(): void {
    for (const t of this.expiryTimers.values()) clearTimeout(t);
    this.expiryTimers.clear();
  }

  private wipeResourceSlices(driver: string | null): number {
    const doomed = this.o.slices.list((s) => {
      const spec = (s['spec'] ?? {}) as { nodeName?: string; driver?: string };
      return spec.nodeName === this.o.nodeName && (driver === null || spec.driver === driver);
    }).items;
    for (const s of doomed) this.o.slices.delete(undefined, s.metadata.name);
    return doomed.length;
  }

  // --- PrepareResources ------------------------------------------------------------------------

  /** PrepareResources; throws `prepare dynamic resources: …` as the kubelet's error. */
  async prepareResources(pod: DraPod): Promise<void> {
    try {
      await this.prepare(pod);
    } catch (err) {
      throw new Error(`prepare dynamic resources: ${(err as Error).message}`, { cause: err });
    }
  }

  private async prepare(pod: DraPod): Promise<void> {
    // A validation pass that changes nothing: a pod that cannot be prepared can be deleted
    // without the kubelet having to call NodeUnprepareResources.
    const infos: { claim: ResourceClaimView; info: ClaimInfo; plugins: Map<string, DRAPlugin> }[] = [];
    for (const podClaim of podResourceClaims(pod)) {
      const ref = claimName(pod, podClaim);
      if (!ref) continue;
      const claim = this.o.claims.get(pod.namespace, ref.name) as unknown as ResourceClaimView | undefined;
      if (!claim)
        throw new Error(
          `fetch ResourceClaim ${ref.name}: resourceclaims.resource.k8s.io "${ref.name}" not found`,
        );
      if (ref.mustCheckOwner) {
        const notOwner = isForPod(pod, claim);
        if (notOwner) throw new Error(notOwner);
      }
      if (!isReservedForPod(pod, claim))
        throw new Error(
          `pod ${pod.name} (${pod.uid}) is not allowed to use ResourceClaim ${ref.name} (${claim.metadata.uid ?? ''})`,
        );
      let info: ClaimInfo;
      try {
        info = ClaimInfo.fromClaim(claim);
      } catch (err) {
        throw new Error(`ResourceClaim ${ref.name}: ${(err as Error).message}`);
      }
      const plugins = new Map<string, DRAPlugin>();
      for (const driver of info.driverState.keys()) plugins.set(driver, this.plugins.getPlugin(driver));
      infos.push({ claim, info, plugins });
    }

    const toPrepare = new Map<string, ResourceClaimView>();
    const batches = new Map<DRAPlugin, DraClaimRef[]>();
    for (const { claim, info: fresh, plugins } of infos) {
      let info = this.cache.get(fresh.claimName, fresh.namespace);
      if (!info) {
        info = fresh;
        this.cache.add(info);
      } else if (info.claimUid !== fresh.claimUid) {
        throw new Error(
          `old ResourceClaim with same name ${fresh.claimName} and different UID ${info.claimUid} still exists (previous pod force-deleted?!)`,
        );
      }
      info.addPodReference(pod.uid);
      // Every claim about to be prepared is tracked before the driver is called.
      await this.checkpoint('checkpoint ResourceClaim cache');
      if (info.prepared) continue;
      toPrepare.set(info.claimUid, claim);
      const ref: DraClaimRef = { namespace: info.namespace, uid: info.claimUid, name: info.claimName };
      for (const driver of [...info.driverState.keys()].sort()) {
        const plugin = plugins.get(driver)!;
        batches.set(plugin, [...(batches.get(plugin) ?? []), ref]);
      }
    }

    for (const [plugin, claims] of batches) {
      let response;
      try {
        response = await plugin.nodePrepareResources(claims);
      } catch (err) {
        throw new Error(`NodePrepareResources: ${goGrpcErrorText(err)}`);
      }
      for (const [uid, result] of Object.entries(response.claims)) {
        const requested = claims.find((c) => c.uid === uid);
        if (!requested) throw new Error(`NodePrepareResources returned result for unknown claim UID ${uid}`);
        if (result.error)
          throw new Error(`NodePrepareResources failed for ResourceClaim ${requested.name}: ${result.error}`);
        const info = this.cache.get(requested.name, requested.namespace);
        if (!info)
          throw new Error(
            `internal error: unable to get claim info for ResourceClaim ${requested.name} in namespace ${requested.namespace}`,
          );
        for (const d of result.devices)
          info.addDevice(plugin.driverName, {
            poolName: d.poolName,
            deviceName: d.deviceName,
            shareId: d.shareId ?? null,
            requestNames: [...d.requestNames],
            cdiDeviceIds: [...d.cdiDeviceIds],
          });
      }
      const unfinished = claims.length - Object.keys(response.claims).length;
      if (unfinished !== 0) throw new Error(`NodePrepareResources skipped ${unfinished} ResourceClaims`);
    }

    for (const claim of toPrepare.values()) {
      const info = this.cache.get(claim.metadata.name ?? '', claim.metadata.namespace ?? '');
      if (!info)
        throw new Error(
          `internal error: unable to get claim info for ResourceClaim ${claim.metadata.name ?? ''} in namespace ${claim.metadata.namespace ?? ''}`,
        );
      info.prepared = true;
    }
    await this.checkpoint('checkpoint ResourceClaim state');
    if (toPrepare.size > 0)
      this.log.info(
        { pod: `${pod.namespace}/${pod.name}`, claims: [...toPrepare.values()].map((c) => c.metadata.name) },
        'prepared ResourceClaims',
      );
  }

  private async checkpoint(what: string): Promise<void> {
    try {
      await this.cache.syncToCheckpoint();
    } catch (err) {
      throw new Error(`${what}: ${(err as Error).message}`);
    }
  }

  // --- UnprepareResources ----------------------------------------------------------------------

  /** UnprepareResources; throws `unprepare dynamic resources: …`. Idempotent. */
  async unprepareResources(pod: DraPod): Promise<void> {
    try {
      let names = this.cache.claimNamesForPod(pod.uid);
      if (names.length === 0) {
        // The checkpoint may be gone: the pod's own spec and status name its claims.
        names = [];
        for (const podClaim of podResourceClaims(pod)) {
          const ref = claimName(pod, podClaim);
          if (ref) names.push(ref.name);
        }
      }
      await this.unprepare(pod.uid, pod.namespace, names);
    } catch (err) {
      throw new Error(`unprepare dynamic resources: ${(err as Error).message}`, { cause: err });
    }
  }

  private async unprepare(podUid: string, namespace: string, names: string[]): Promise<void> {
    const batches = new Map<string, DraClaimRef[]>();
    const unprepared = new Map<string, string>();
    for (const name of names) {
      const info = this.cache.get(name, namespace);
      if (!info) continue;
      if (info.podUids.size > 1) {
        // Another pod on this node still uses the claim; checkpointed with the next change.
        info.deletePodReference(podUid);
        continue;
      }
      unprepared.set(info.claimUid, info.claimName);
      const ref: DraClaimRef = { namespace: info.namespace, uid: info.claimUid, name: info.claimName };
      for (const driver of info.driverState.keys())
        batches.set(driver, [...(batches.get(driver) ?? []), ref]);
    }
    for (const [driver, claims] of [...batches].sort(([a], [b]) => a.localeCompare(b))) {
      const plugin = this.plugins.getPlugin(driver);
      let response;
      try {
        response = await plugin.nodeUnprepareResources(claims);
      } catch (err) {
        throw new Error(`NodeUnprepareResources: ${goGrpcErrorText(err)}`);
      }
      for (const [uid, result] of Object.entries(response.claims)) {
        const requested = claims.find((c) => c.uid === uid);
        if (!requested)
          throw new Error(`NodeUnprepareResources returned result for unknown claim UID ${uid}`);
        if (result.error)
          throw new Error(
            `NodeUnprepareResources failed for ResourceClaim ${requested.name}: ${result.error}`,
          );
      }
      const unfinished = claims.length - Object.keys(response.claims).length;
      if (unfinished !== 0) throw new Error(`NodeUnprepareResources skipped ${unfinished} ResourceClaims`);
    }
    for (const name of unprepared.values()) this.cache.delete(name, namespace);
    await this.checkpoint('checkpoint ResourceClaim state');
    if (unprepared.size > 0)
      this.log.info({ podUid, namespace, claims: [...unprepared.values()] }, 'unprepared ResourceClaims');
  }

  /** PodMightNeedToUnprepareResources. */
  podMightNeedToUnprepareResources(podUid: string): boolean {
    return this.cache.hasPodReference(podUid);
  }

  /**
   * The reconcile loop: claims still referenced by pods that are no longer active are unprepared
   * (failures are retried on the next pass).
   */
  async reconcile(activePodUids: ReadonlySet<string>): Promise<void> {
    const inactive = new Map<string, { namespace: string; names: string[] }>();
    for (const info of this.cache.all())
      for (const uid of info.podUids) {
        if (activePodUids.has(uid)) continue;
        const entry = inactive.get(uid) ?? { namespace: info.namespace, names: [] };
        entry.names.push(info.claimName);
        inactive.set(uid, entry);
      }
    for (const [uid, { namespace, names }] of inactive) {
      try {
        await this.unprepare(uid, namespace, names);
      } catch (err) {
        this.log.info(
          { podUid: uid, err: (err as Error).message },
          'Unpreparing pod resources in reconcile loop failed, will retry',
        );
      }
    }
  }

  // --- what containers, PodResources and the pod status see --------------------------------------

  /**
   * GetResources: the CDI device IDs a container gets (the requests it names of each claim, then
   * the requests of the special claim mapped to its non-zero extended resource requests).
   */
  getResources(pod: DraPod, container: DraContainer): string[] {
    const containerClaims = container.claims;
    const cdi: string[] = [];
    for (const podClaim of pod.resourceClaims) {
      const requests = containerClaims.filter((c) => c.name === podClaim.name).map((c) => c.request ?? '');
      if (requests.length === 0) continue;
      const ref = claimName(pod, podClaim);
      if (!ref) continue;
      const info = this.cache.get(ref.name, pod.namespace);
      if (!info)
        throw new Error(
          `internal error: unable to get claim info for ResourceClaim ${ref.name} in namespace ${pod.namespace}`,
        );
      for (const request of requests) cdi.push(...info.cdiDevicesAsList(request));
    }
    const ext = pod.extendedResourceClaimStatus;
    if (ext) {
      const requests = extendedResourceRequestNames(pod, container);
      if (requests.length > 0) {
        const info = this.cache.get(ext.resourceClaimName, pod.namespace);
        if (!info)
          throw new Error(
            `internal error: unable to get claim info for ResourceClaim ${ext.resourceClaimName} in namespace ${pod.namespace}`,
          );
        for (const request of requests) cdi.push(...info.cdiDevicesAsList(request));
      }
    }
    return cdi;
  }

  /**
   * GetContainerClaimInfos: the claims a container uses, in the pod's order, then the special
   * claim when one of its request mappings names the container (all of that claim's devices).
   */
  getContainerClaimInfos(pod: DraPod, container: DraContainer): ClaimInfo[] {
    const used = new Set(container.claims.map((c) => c.name));
    const out: ClaimInfo[] = [];
    for (const podClaim of pod.resourceClaims) {
      if (!used.has(podClaim.name)) continue;
      const ref = claimName(pod, podClaim);
      if (!ref) continue;
      const info = this.cache.get(ref.name, pod.namespace);
      if (!info) throw new Error(`unable to get information for ResourceClaim ${ref.name}`);
      out.push(info);
    }
    const ext = pod.extendedResourceClaimStatus;
    if (ext?.requestMappings.some((m) => m.containerName === container.name)) {
      const info = this.cache.get(ext.resourceClaimName, pod.namespace);
      if (!info)
        throw new Error(
          `unable to get claim info for claim ${ext.resourceClaimName} in namespace ${pod.namespace}`,
        );
      out.push(info);
    }
    return out;
  }

  /**
   * The container's `dynamic_resources` exactly as containerManagerImpl.GetDynamicResources builds
   * them: per claim, per driver, per device a ClaimResource whose CDI devices are those of that
   * device and of the driver's devices before it (the kubelet appends to one slice per driver).
   * An error (a claim not prepared yet) gives an empty list, as the kubelet logs and returns none.
   */
  dynamicResources(pod: DraPod, container: DraContainer): DynamicResourceView[] {
    let infos: ClaimInfo[];
    try {
      infos = this.getContainerClaimInfos(pod, container);
    } catch (err) {
      this.log.debug(
        { pod: `${pod.namespace}/${pod.name}`, err: (err as Error).message },
        'Unable to get container claim info state',
      );
      return [];
    }
    return infos.map((info) => ({
      claimName: info.claimName,
      claimNamespace: info.namespace,
      claimResources: [...info.driverState].flatMap(([driver, { devices }]) => {
        const cdiDevices: { name: string }[] = [];
        return devices.map((d) => {
          cdiDevices.push(...d.cdiDeviceIds.map((name) => ({ name })));
          return {
            cdiDevices: [...cdiDevices],
            driverName: driver,
            poolName: d.poolName,
            deviceName: d.deviceName,
            ...(d.shareId !== null ? { shareId: d.shareId } : {}),
          };
        });
      }),
    }));
  }

  /**
   * UpdateAllocatedResourcesStatus for one container: per claim (and request) it names,
   * `claim:<pod claim>[/<request>]` with each device's health; the resource ID is the device's
   * first CDI ID, else `<driver>/<pool>/<device>`. Entries without devices are left out.
   */
  allocatedResourcesStatus(pod: DraPod, containerClaims: ContainerClaim[]): DraResourceStatus[] {
    const out: DraResourceStatus[] = [];
    for (const claim of containerClaims) {
      let actual = pod.resourceClaimStatuses.find((s) => s.name === claim.name)?.resourceClaimName;
      if (!actual) {
        const podClaim = pod.resourceClaims.find((c) => c.name === claim.name);
        try {
          actual = podClaim ? claimName(pod, podClaim)?.name : undefined;
        } catch {
          actual = undefined;
        }
      }
      if (!actual) continue;
      const info = this.cache.get(actual, pod.namespace);
      if (!info) continue;
      const name = claim.request ? `claim:${claim.name}/${claim.request}` : `claim:${claim.name}`;
      const seen = new Set<string>();
      const resources: DraResourceStatus['resources'] = [];
      for (const [driver, { devices }] of info.driverState)
        for (const d of devices) {
          if (
            claim.request &&
            d.requestNames.length > 0 &&
            !d.requestNames.includes(baseRequestRef(claim.request))
          )
            continue;
          const { health, message } = this.health.get(driver, d.poolName, d.deviceName);
          const resourceID = d.cdiDeviceIds[0] ?? `${driver}/${d.poolName}/${d.deviceName}`;
          if (seen.has(resourceID)) continue;
          seen.add(resourceID);
          resources.push({ resourceID, health, ...(message ? { message } : {}) });
        }
      const existing = out.find((s) => s.name === name);
      if (existing) existing.resources = resources;
      else out.push({ name, resources });
    }
    return out.filter((s) => s.resources.length > 0);
  }

  /** The health of a device as the kubelet currently sees it. */
  deviceHealth(driver: string, pool: string, device: string): DeviceHealthStatus {
    return this.health.get(driver, pool, device).health;
  }

  /** Every device a prepared claim used by `podUid` holds, with its driver. */
  podDevices(podUid: string): { driver: string; pool: string; device: string; claim: string }[] {
    return this.cache
      .all()
      .filter((c) => c.podUids.has(podUid))
      .flatMap((c) =>
        [...c.driverState].flatMap(([driver, { devices }]) =>
          devices.map((d) => ({ driver, pool: d.poolName, device: d.deviceName, claim: c.claimName })),
        ),
      );
  }

  // --- health (HandleWatchResourcesStream) -----------------------------------------------------

  private async handleHealth(driver: string, res: HealthResponse): Promise<void> {
    const reported = res.devices.map((d) => {
      const timeout =
        d.healthCheckTimeoutSeconds > 0 ? d.healthCheckTimeoutSeconds * 1000 : DEFAULT_HEALTH_TIMEOUT_MS;
      return {
        poolName: d.device?.poolName ?? '',
        deviceName: d.device?.deviceName ?? '',
        health: HEALTH[d.health] ?? 'Unknown',
        healthCheckTimeoutMs: timeout,
        message: truncateHealthMessage(d.message),
      };
    });
    let changed;
    try {
      changed = await this.health.update(driver, reported);
    } catch (err) {
      this.log.error({ driver, err: String(err) }, 'Failed to save health checkpoint after update');
      return;
    }
    this.scheduleExpiry(driver);
    if (changed.length === 0) return;
    const keys = new Set(changed.map((d) => `${d.poolName}/${d.deviceName}`));
    this.log.info(
      { driver, devices: changed.map((d) => ({ pool: d.poolName, device: d.deviceName, health: d.health })) },
      'DRA device health changed',
    );
    this.notifyPods(driver, (pool, device) => keys.has(`${pool}/${device}`));
  }

  private async handleHealthStreamEnded(driver: string): Promise<void> {
    const t = this.expiryTimers.get(driver);
    if (t) clearTimeout(t);
    this.expiryTimers.delete(driver);
    try {
      await this.health.clearDriver(driver);
    } catch (err) {
      this.log.error({ driver, err: String(err) }, 'Failed to clear health info cache for driver');
    }
    this.notifyPods(driver, () => true);
  }

  /** Re-reports pods when the next reported device of `driver` times out to Unknown. */
  private scheduleExpiry(driver: string): void {
    const old = this.expiryTimers.get(driver);
    if (old) clearTimeout(old);
    this.expiryTimers.delete(driver);
    const at = this.health.nextExpiry(driver);
    if (at === null) return;
    const timer = setTimeout(
      () => {
        this.expiryTimers.delete(driver);
        this.notifyPods(driver, () => true);
        this.scheduleExpiry(driver);
      },
      Math.max(0, at - Date.now()) + 1,
    );
    timer.unref();
    this.expiryTimers.set(driver, timer);
  }

  private notifyPods(driver: string, affects: (pool: string, device: string) => boolean): void {
    const pods = new Set<string>();
    for (const info of this.cache.all()) {
      const devices = info.driverState.get(driver)?.devices ?? [];
      if (devices.some((d) => affects(d.poolName, d.deviceName)))
        for (const uid of info.podUids) pods.add(uid);
    }
    if (pods.size > 0) for (const watcher of this.podHealthWatchers) watcher([...pods]);
  }

  /**
   * Calls `watcher` with the pods whose allocatedResourcesStatus may have changed (health reports,
   * timeouts): the kubelet's sync loop hears of them as upstream's health channel tells it. Returns
   * the cancel.
   */
  watchPodHealth(watcher: (podUids: string[]) => void): () => void {
    this.podHealthWatchers.add(watcher);
    return () => this.podHealthWatchers.delete(watcher);
  }

  // --- state -------------------------------------------------------------------------------------

  state(): DraStateView {
    return {
      drivers: this.plugins.drivers(),
      claims: this.cache
        .all()
        .sort((a, b) => `${a.namespace}/${a.claimName}`.localeCompare(`${b.namespace}/${b.claimName}`))
        .map((c) => ({
          namespace: c.namespace,
          name: c.claimName,
          uid: c.claimUid,
          prepared: c.prepared,
          podUids: [...c.podUids],
          devices: [...c.driverState].flatMap(([driver, { devices }]) =>
            devices.map((d) => {
              const h = this.health.get(driver, d.poolName, d.deviceName);
              return {
                driver,
                pool: d.poolName,
                device: d.deviceName,
                requestNames: [...d.requestNames],
                cdiDeviceIds: [...d.cdiDeviceIds],
                shareId: d.shareId,
                health: h.health,
                message: h.message,
              };
            }),
          ),
        })),
    };
  }
}
