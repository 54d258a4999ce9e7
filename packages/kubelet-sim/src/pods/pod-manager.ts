// The kubelet's pods (pkg/kubelet/pod/pod_manager.go, and kubelet.go's HandlePodAdditions →
// canAdmitPod; release-1.33): pods come from the control API, are admitted one at a time in the
// kubelet's order — the resource managers through the Topology Manager's admit handler (device
// allocation per container, init containers first, CPUs, memory), then the node-resources
// predicate — and a rejected pod stays visible as Failed. Admitted pods are driven by the pod
// workers (pod-workers.ts); their objects (pod-status.ts) are served by the API slice.
//
// A pod with ResourceClaims meets the control plane first, as in a cluster: the ResourceClaim
// controller creates its claims from templates, the scheduler allocates and reserves them (or the
// pod stays Pending, Unschedulable, until a change lets it fit), and only a bound pod reaches the
// kubelet. The kubelet prepares the claims before the pod's sandbox (failures are retried every
// syncFrequency), unprepares them once the pod has stopped, and the controller then deallocates
// and deletes what it generated. A pod asking for an extended resource that a DeviceClass maps
// (DRAExtendedResource) is scheduled the same way: the scheduler creates its special claim and
// records it in `status.extendedResourceClaimStatus`; the kubelet prepares that claim like the
// others and leaves the mapped resources out of the device manager and the node-resources
// predicate (removeMissingExtendedResources, isDRAExtendedResource).

import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import {
  checkNodeResources,
  qosClass,
  type AdmissionDecision,
  type CpuManager,
  type MemoryManager,
  type TopologyAdmission,
  type TopologyOverride,
} from '@plugboard/topology';
import type { DeviceManager } from '../cm/devicemanager/manager.js';
import type { DraManager } from '../cm/dra/manager.js';
import type { DraPod } from '../cm/dra/types.js';
import type { DraScheduler, ScheduleResult } from '../controlplane/scheduler.js';
import { DEFAULT_SCHEDULER } from '../controlplane/scheduler.js';
import type { ControlPlanePod, ResourceClaimController } from '../controlplane/resourceclaim-controller.js';
import type { EvictionCandidate } from '../controlplane/device-taint-eviction.js';
import { asRejection, fromTopology, KubeletSimError } from '../errors.js';
import type { EventRecorder, EventType } from '../apiserver/events.js';
import type { ObjectStore } from '../apiserver/object-store.js';
import { parsePodSpec, withoutDraExtendedResources, type ContainerSpec, type PodSpec } from './pod-spec.js';
import { renderPod, resourceStatus } from './pod-status.js';
import { PodWorkers } from './pod-workers.js';
import {
  clearTimer,
  isTerminal,
  newContainer,
  podIpFor,
  reportedContainers,
  type AdmittedPod,
  type BackoffOptions,
  type ContainerRuntime,
  type PodRuntime,
} from './runtime.js';

export interface PodManagerOptions {
  nodeName: string;
  hostIp: string;
  deviceManager: DeviceManager;
  cpuManager: CpuManager;
  memoryManager: MemoryManager;
  topology: TopologyAdmission;
  store: ObjectStore;
  events: EventRecorder;
  backoff: BackoffOptions;
  /** Node allocatable for the predicate: cpu in millicores, memory in bytes, pods, extended resources. */
  nodeAllocatable: () => Map<string, number>;
  /** Dynamic Resource Allocation: the kubelet's DRA manager and the control plane around it. */
  dra?: {
    manager: DraManager;
    claimController: ResourceClaimController;
    scheduler: DraScheduler;
  };
  /** How soon a pod whose sync stopped early (a failed DRA prepare) is synced again (kubelet: 1 min). */
  syncFrequencyMs: number;
  logger: Logger;
}

/** What the DRA manager and the controllers read of a pod. */
export function draPodOf(pod: PodRuntime): DraPod & ControlPlanePod {
  return {
    name: pod.spec.name,
    namespace: pod.spec.namespace,
    uid: pod.spec.uid,
    resourceClaims: pod.spec.resourceClaims,
    resourceClaimStatuses: pod.resourceClaimStatuses,
    nodeName: pod.unschedulable ? pod.spec.requestedNodeName : (pod.spec.rawSpec['nodeName'] as string),
    initContainers: pod.spec.initContainers,
    containers: pod.spec.containers,
    extendedResourceClaimStatus: pod.extendedResourceClaimStatus,
  };
}

/** The pod has claims for the DRA manager: its own, or the special claim of its extended resources. */
const usesDra = (pod: PodRuntime): boolean =>
  pod.spec.resourceClaims.length > 0 || pod.extendedResourceClaimStatus !== null;

export class PodManager {
  private readonly pods = new Map<string, PodRuntime>();
  private admission: Promise<unknown> = Promise.resolve();
  private nextIp = 0;
  private readonly log: Logger;
  private readonly workers: PodWorkers;
  private readonly cancels: (() => void)[] = [];

  constructor(private readonly o: PodManagerOptions) {
    this.log = o.logger.child({ component: 'pods' });
    this.workers = new PodWorkers({
      devices: o.deviceManager,
      backoff: o.backoff,
      log: this.log,
      event: (pod, c, type, reason, message) => this.event(pod, c, type, reason, message),
      publish: (pod) => this.publish(pod),
      release: (pod) => this.release(pod),
      environment: (pod, c) => this.environment(pod, c),
      prepareSandbox: (pod) => this.prepareSandbox(pod),
      draUnhealthy: (pod, c) => this.draUnhealthy(pod, c),
    });
    o.deviceManager.on('devices', ({ resource }) =>
      this.workers.onDeviceHealth(resource, this.pods.values()),
    );
    if (o.dra)
      this.cancels.push(
        o.dra.scheduler.watch(() => void this.retryUnschedulable()),
        o.dra.manager.watchPodHealth((uids) => this.onDraHealth(uids)),
      );
  }

  /** Pods the kubelet considers active (bound, not terminal): what PodResources lists. */
  activePods(): { spec: PodSpec; containers: ContainerSpec[]; dra: DraPod }[] {
    return [...this.pods.values()]
      .filter((p) => !isTerminal(p) && !p.gone && !p.unschedulable)
      .map((p) => ({ spec: p.spec, containers: reportedContainers(p), dra: draPodOf(p) }));
  }

  /**
   * Any pod the kubelet knows by name, terminated ones included (PodResources Get uses the pod
   * manager, not the active pods), with the containers PodResources reports. A pod the scheduler
   * has not bound is not the kubelet's.
   */
  findPod(
    namespace: string,
    name: string,
  ): { spec: PodSpec; containers: ContainerSpec[]; dra: DraPod } | undefined {
    const p = this.pods.get(`${namespace}/${name}`);
    return p && !p.unschedulable
      ? { spec: p.spec, containers: reportedContainers(p), dra: draPodOf(p) }
      : undefined;
  }

  /** Pods with ResourceClaims, for the device taint eviction controller. */
  evictionCandidates(): EvictionCandidate[] {
    return [...this.pods.values()]
      .filter((p) => !p.gone && usesDra(p))
      .map((p) => ({ ...draPodOf(p), terminal: isTerminal(p) }));
  }

  allPods(): PodRuntime[] {
    return [...this.pods.values()];
  }

  /** Admits one pod at a time, as the kubelet's sync loop does. */
  admit(input: unknown): Promise<AdmittedPod> {
    const run = this.admission.then(() => this.admitNow(input));
    this.admission = run.catch(() => undefined);
    return run;
  }

  /**
   * Where a pod would land, or why it would be refused, without admitting it: the same admission
   * on a scratch copy (no plugin RPCs), undone at once. Queued with real admissions.
   */
  dryRun(input: unknown, override: TopologyOverride = {}): Promise<AdmissionDecision> {
    const run = this.admission.then(() => this.dryRunNow(input, override));
    this.admission = run.catch(() => undefined);
    return run;
  }

  private async dryRunNow(input: unknown, override: TopologyOverride): Promise<AdmissionDecision> {
    const spec = parsePodSpec(input, this.o.nodeName);
    const decision = fromTopology(() => this.o.topology.newDecision(true, override));
    if (this.pods.has(`${spec.namespace}/${spec.name}`)) {
      decision.result = 'rejected';
      decision.reason = 'AlreadyExists';
      decision.message = `pods "${spec.name}" already exists`;
      return decision;
    }
    const scratch: PodSpec = { ...spec, uid: `dry-run-${randomBytes(8).toString('hex')}` };
    try {
      await this.o.topology.admit(scratch, qosClass(scratch), decision, true);
      this.checkNodeResources(scratch, null);
    } catch (err) {
      const rejection = asRejection(err);
      decision.result = 'rejected';
      decision.reason = rejection.reason;
      decision.message = rejection.message;
    } finally {
      this.o.deviceManager.freePod(scratch.uid, true);
      this.o.cpuManager.release(scratch.uid);
      this.o.memoryManager.release(scratch.uid);
    }
    return decision;
  }

  private async admitNow(input: unknown): Promise<AdmittedPod> {
    const spec = parsePodSpec(input, this.o.nodeName);
    const k = `${spec.namespace}/${spec.name}`;
    if (this.pods.has(k)) {
      throw new KubeletSimError('AlreadyExists', `pods "${spec.name}" already exists`, {
        reason: 'AlreadyExists',
      });
    }
    const pod: PodRuntime = {
      spec,
      createdAt: new Date(),
      startTime: null,
      phase: 'Pending',
      podIp: podIpFor(this.nextIp++),
      qos: qosClass(spec),
      init: spec.initContainers.map(newContainer),
      app: spec.containers.map(newContainer),
      initDone: spec.initContainers.length === 0,
      rejected: false,
      conditions: new Map(),
      gone: false,
      advancing: false,
      advanceAgain: false,
      finalResourceStatus: null,
      admission: this.o.topology.newDecision(false),
      resourceClaimStatuses: [],
      extendedResourceClaimStatus: null,
      unschedulable: null,
      sandboxReady: spec.resourceClaims.length === 0,
      syncTimer: null,
      disruption: null,
    };
    this.pods.set(k, pod);
    const dra = this.o.dra;
    if (
      dra &&
      (spec.resourceClaims.length > 0 ||
        (spec.requestedNodeName === null && dra.scheduler.hasDeviceClassMappedExtendedResource(spec)))
    ) {
      const scheduled = this.scheduleDra(pod);
      if (!scheduled.ok) {
        this.markUnschedulable(pod, scheduled);
        return this.publish(pod);
      }
    }
    return this.bindAndAdmit(pod);
  }

  /**
   * The control plane's part for a pod with claims: the ResourceClaim controller's claims from
   * templates, then (unless the pod names its node, bypassing the scheduler) one scheduling cycle.
   */
  private scheduleDra(pod: PodRuntime): ScheduleResult {
    const dra = this.o.dra!;
    const nodeName = pod.spec.requestedNodeName;
    pod.resourceClaimStatuses = dra.claimController.syncPod({ ...draPodOf(pod), nodeName });
    if (nodeName !== null) return { ok: true };
    const scheduled = dra.scheduler.schedule({ ...draPodOf(pod), nodeName: null });
    if (scheduled.ok && scheduled.extendedResourceClaimStatus) {
      pod.extendedResourceClaimStatus = scheduled.extendedResourceClaimStatus;
      pod.sandboxReady = false;
    }
    return scheduled;
  }

  private markUnschedulable(pod: PodRuntime, r: Extract<ScheduleResult, { ok: false }>): void {
    pod.unschedulable = { reason: r.reason, message: r.message };
    pod.admission = null;
    this.event(pod, undefined, 'Warning', 'FailedScheduling', r.message, DEFAULT_SCHEDULER);
  }

  /** Schedules Pending pods again after a change that may let them fit (the scheduling queue). */
  private retryUnschedulable(): Promise<void> {
    const run = this.admission.then(async () => {
      for (const pod of [...this.pods.values()]) {
        if (!pod.unschedulable || pod.gone) continue;
        const scheduled = this.scheduleDra(pod);
        if (!scheduled.ok) {
          this.markUnschedulable(pod, scheduled);
          this.publish(pod);
          continue;
        }
        pod.unschedulable = null;
        pod.admission = this.o.topology.newDecision(false);
        try {
          await this.bindAndAdmit(pod);
        } catch {
          // A kubelet rejection is on the pod (Failed) already.
        }
      }
    });
    this.admission = run.catch(() => undefined);
    return run;
  }

  /** The pod is bound to this node; the kubelet admits it and starts its containers. */
  private async bindAndAdmit(pod: PodRuntime): Promise<AdmittedPod> {
    const { spec } = pod;
    const k = `${spec.namespace}/${spec.name}`;
    // The pod arrives bound to this node: what the scheduler records when it binds one.
    this.event(
      pod,
      undefined,
      'Normal',
      'Scheduled',
      `Successfully assigned ${spec.namespace}/${spec.name} to ${this.o.nodeName}`,
      DEFAULT_SCHEDULER,
    );
    const log = this.log.child({ pod: k, uid: spec.uid });
    try {
      const admitted = withoutDraExtendedResources(spec, pod.extendedResourceClaimStatus);
      await this.o.topology.admit(admitted, pod.qos, pod.admission!, false);
      this.checkNodeResources(admitted, pod);
    } catch (err) {
      this.o.deviceManager.freePod(spec.uid);
      this.o.cpuManager.release(spec.uid);
      this.o.memoryManager.release(spec.uid);
      const rejection = asRejection(err);
      pod.rejected = true;
      pod.phase = 'Failed';
      pod.reason = rejection.reason;
      pod.message = `Pod was rejected: ${rejection.message}`;
      pod.admission!.result = 'rejected';
      pod.admission!.reason = rejection.reason;
      pod.admission!.message = rejection.message;
      log.warn({ reason: rejection.reason, err: rejection.message }, 'pod admission rejected');
      this.event(pod, undefined, 'Warning', rejection.reason, rejection.message);
      this.publish(pod);
      void this.finishDra(pod);
      throw rejection;
    }
    pod.startTime = new Date();
    log.info(
      { policy: this.o.topology.policy, affinity: pod.admission!.containers.map((c) => c.affinity) },
      'pod admitted',
    );
    this.publish(pod);
    await this.workers.advance(pod);
    return this.publish(pod);
  }

  /**
   * PrepareDynamicResources before the sandbox: a failure is the kubelet's
   * FailedPrepareDynamicResources event, and the pod is synced again after syncFrequency.
   */
  private async prepareSandbox(pod: PodRuntime): Promise<boolean> {
    const dra = this.o.dra;
    if (!dra || !usesDra(pod)) {
      pod.sandboxReady = true;
      return true;
    }
    try {
      await dra.manager.prepareResources(draPodOf(pod));
      pod.sandboxReady = true;
      return true;
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.log.warn(
        { pod: `${pod.spec.namespace}/${pod.spec.name}`, err: message },
        'Failed to prepare dynamic resources',
      );
      this.event(
        pod,
        undefined,
        'Warning',
        'FailedPrepareDynamicResources',
        `Failed to prepare dynamic resources: ${message}`,
      );
      if (!pod.gone) {
        pod.syncTimer = setTimeout(() => {
          pod.syncTimer = null;
          this.workers
            .advance(pod)
            .catch((e: unknown) =>
              this.log.error(
                { pod: `${pod.spec.namespace}/${pod.spec.name}`, err: String(e) },
                'pod sync failed',
              ),
            );
        }, this.o.syncFrequencyMs);
        pod.syncTimer.unref();
      }
      return false;
    }
  }

  private draUnhealthy(pod: PodRuntime, c: ContainerRuntime): string | null {
    if (!this.o.dra || c.spec.claims.length === 0) return null; // the special claim has no health entries
    for (const s of this.o.dra.manager.allocatedResourcesStatus(draPodOf(pod), c.spec.claims))
      for (const r of s.resources)
        if (r.health === 'Unhealthy') return `device ${r.resourceID} of ${s.name} is unhealthy`;
    return null;
  }

  /** The DRA manager saw health change for these pods' devices. */
  onDraHealth(podUids: readonly string[]): void {
    const uids = new Set(podUids);
    for (const pod of this.pods.values()) if (uids.has(pod.spec.uid)) this.workers.onPodHealth(pod);
  }

  /**
   * A stopped pod's claims: the kubelet unprepares them (a failure is retried by the DRA
   * manager's reconcile loop), then the ResourceClaim controller releases them.
   */
  private finishDra(pod: PodRuntime): Promise<void> {
    const dra = this.o.dra;
    if (!dra || !usesDra(pod)) return Promise.resolve();
    const draPod = draPodOf(pod);
    const k = `${pod.spec.namespace}/${pod.spec.name}`;
    return (async () => {
      try {
        await dra.manager.unprepareResources(draPod);
      } catch (err) {
        this.log.warn(
          { pod: k, err: (err as Error).message },
          'Failed to unprepare dynamic resources; will retry',
        );
        this.scheduleDraReconcile();
      }
      dra.claimController.podFinished(draPod);
    })();
  }

  private draReconcileTimer: NodeJS.Timeout | null = null;

  /** The DRA manager's reconcile loop, run once a failed unprepare needs another try. */
  private scheduleDraReconcile(): void {
    if (this.draReconcileTimer || !this.o.dra) return;
    this.draReconcileTimer = setTimeout(() => {
      this.draReconcileTimer = null;
      void this.reconcileDra();
    }, this.o.syncFrequencyMs);
    this.draReconcileTimer.unref();
  }

  /** Claims still referenced by pods that are not active any more are unprepared. */
  async reconcileDra(): Promise<void> {
    const dra = this.o.dra;
    if (!dra) return;
    const active = new Set(
      [...this.pods.values()].filter((p) => !isTerminal(p) && !p.gone).map((p) => p.spec.uid),
    );
    await dra.manager.reconcile(active);
    if ([...dra.manager.state().claims].some((c) => c.podUids.some((uid) => !active.has(uid))))
      this.scheduleDraReconcile();
  }

  /**
   * A controller's eviction (the device taint eviction controller): the DisruptionTarget
   * condition, then deletion. Nothing happens to a pod that is gone or was replaced.
   */
  async evict(namespace: string, name: string, uid: string, reason: string, message: string): Promise<void> {
    const pod = this.pods.get(`${namespace}/${name}`);
    if (!pod || pod.gone || pod.spec.uid !== uid) return;
    pod.disruption = { reason, message };
    this.publish(pod);
    await this.delete(namespace, name);
  }

  async delete(namespace: string, name: string): Promise<void> {
    const k = `${namespace}/${name}`;
    const pod = this.pods.get(k);
    if (!pod) throw new KubeletSimError('NotFound', `pods "${name}" not found`, { reason: 'NotFound' });
    pod.gone = true;
    if (pod.syncTimer) clearTimeout(pod.syncTimer);
    pod.syncTimer = null;
    for (const c of [...pod.init, ...pod.app]) {
      clearTimer(c);
      if (c.state.kind === 'running') {
        this.event(pod, c, 'Normal', 'Killing', `Stopping container ${c.spec.name}`);
        c.log.write('received SIGTERM; exiting with code 0');
      }
      c.log.end();
    }
    this.pods.delete(k);
    const wasTerminal = isTerminal(pod);
    this.release(pod);
    // Resources are unprepared after the containers stopped and before the pod object goes
    // (SyncTerminatingPod); a terminal pod did that when it ended.
    const dra = this.o.dra;
    if (dra && usesDra(pod) && !wasTerminal && !pod.unschedulable) {
      try {
        await dra.manager.unprepareResources(draPodOf(pod));
      } catch (err) {
        this.log.warn(
          { pod: k, err: (err as Error).message },
          'Failed to unprepare dynamic resources; will retry',
        );
        this.scheduleDraReconcile();
      }
    }
    this.o.store.delete(namespace, name);
    // The pod is gone: the ResourceClaim controller (and garbage collector) clean up its claims.
    if (dra && usesDra(pod)) dra.claimController.podFinished(draPodOf(pod));
    this.log.info({ pod: k }, 'pod deleted; devices freed');
  }

  /** Stops every timer (the simulator is shutting down). */
  stop(): void {
    for (const p of this.pods.values()) {
      for (const c of [...p.init, ...p.app]) clearTimer(c);
      if (p.syncTimer) clearTimeout(p.syncTimer);
      p.syncTimer = null;
    }
    if (this.draReconcileTimer) clearTimeout(this.draReconcileTimer);
    this.draReconcileTimer = null;
    for (const cancel of this.cancels.splice(0)) cancel();
  }

  /** Frees allocations (e.g. restored from a checkpoint) of pods that are not active (UpdateAllocatedDevices). */
  reconcileAllocations(): void {
    const active = new Set(
      [...this.pods.values()].filter((p) => !isTerminal(p) && !p.gone).map((p) => p.spec.uid),
    );
    for (const uid of this.o.deviceManager.podUids()) if (!active.has(uid)) this.o.deviceManager.freePod(uid);
  }

  private release(pod: PodRuntime): void {
    if (!pod.finalResourceStatus)
      pod.finalResourceStatus = new Map(
        [...pod.init, ...pod.app].map((c) => [
          c.spec.name,
          resourceStatus(pod, c, this.o.deviceManager, this.draStatus),
        ]),
      );
    this.o.deviceManager.freePod(pod.spec.uid);
    this.o.cpuManager.release(pod.spec.uid);
    this.o.memoryManager.release(pod.spec.uid);
    // A pod that ended on its own: its claims are unprepared and released now (a deleted pod's
    // are, in delete()).
    if (isTerminal(pod) && !pod.gone && !pod.rejected) void this.finishDra(pod);
  }

  /** The DRA manager's allocatedResourcesStatus entries of a container. */
  private readonly draStatus = (pod: PodRuntime, c: ContainerRuntime) =>
    this.o.dra && !pod.unschedulable
      ? this.o.dra.manager.allocatedResourcesStatus(draPodOf(pod), c.spec.claims)
      : [];

  /** A pod's containers and their logs (`pods/{name}/log`); undefined for an unknown pod. */
  containersOf(namespace: string, name: string): ContainerRuntime[] | undefined {
    const p = this.pods.get(`${namespace}/${name}`);
    return p ? [...p.init, ...p.app] : undefined;
  }

  /** What a starting container finds: its devices (the plugin's Allocate response), CPUs, memory. */
  private environment(pod: PodRuntime, c: ContainerRuntime): string[] {
    const lines: string[] = [];
    for (const a of this.o.deviceManager.containerAllocations(pod.spec.uid, c.spec.name)) {
      const r = a.response;
      lines.push(`devices: ${a.resource} = ${[...a.deviceIds].join(', ')}`);
      for (const [k, v] of Object.entries(r.envs).sort(([x], [y]) => x.localeCompare(y)))
        lines.push(`env: ${k}=${v}`);
      for (const d of r.devices)
        lines.push(`device node: ${d.containerPath} (host ${d.hostPath}, ${d.permissions || 'rwm'})`);
      for (const m of r.mounts)
        lines.push(`mount: ${m.containerPath} (host ${m.hostPath}${m.readOnly ? ', read-only' : ''})`);
      for (const d of r.cdiDevices) lines.push(`cdi device: ${d.name}`);
      for (const [k, v] of Object.entries(r.annotations).sort(([x], [y]) => x.localeCompare(y)))
        lines.push(`annotation: ${k}=${v}`);
    }
    lines.push(...this.draEnvironment(pod, c));
    const cpus = this.o.cpuManager.cpusOf(pod.spec.uid, c.spec.name);
    lines.push(
      cpus.length > 0
        ? `cpus: ${cpus.join(',')} (exclusive)`
        : `cpus: ${this.o.cpuManager.sharedPool().join(',')} (shared pool)`,
    );
    for (const b of this.o.memoryManager.blocksOf(pod.spec.uid, c.spec.name))
      lines.push(`memory: ${b.type} ${b.bytes} bytes on NUMA node(s) ${b.numaNodes.join(',')}`);
    return lines;
  }

  /** The container's claims and the CDI devices the DRA manager hands it (GetResources). */
  private draEnvironment(pod: PodRuntime, c: ContainerRuntime): string[] {
    const dra = this.o.dra;
    if (!dra || (c.spec.claims.length === 0 && !pod.extendedResourceClaimStatus)) return [];
    const draPod = draPodOf(pod);
    const lines: string[] = [];
    let infos: ReturnType<DraManager['getContainerClaimInfos']> = [];
    try {
      infos = dra.manager.getContainerClaimInfos(draPod, c.spec);
    } catch (err) {
      lines.push(`claims unavailable: ${(err as Error).message}`);
    }
    for (const info of infos) {
      const devices = [...info.driverState].flatMap(([driver, { devices }]) =>
        devices.map((d) => `${driver}/${d.poolName}/${d.deviceName}`),
      );
      lines.push(`claim: ResourceClaim ${info.namespace}/${info.claimName} = ${devices.join(', ')}`);
    }
    try {
      for (const id of dra.manager.getResources(draPod, c.spec)) lines.push(`cdi device: ${id}`);
    } catch (err) {
      lines.push(`cdi devices unavailable: ${(err as Error).message}`);
    }
    return lines;
  }

  /** The CDI device IDs the container got from its claims (state()). */
  cdiDevicesOf(pod: PodRuntime, c: ContainerSpec): string[] {
    if (!this.o.dra || (c.claims.length === 0 && !pod.extendedResourceClaimStatus) || pod.unschedulable)
      return [];
    try {
      return this.o.dra.manager.getResources(draPodOf(pod), c);
    } catch {
      return [];
    }
  }

  private event(
    pod: PodRuntime,
    c: ContainerRuntime | undefined,
    type: EventType,
    reason: string,
    message: string,
    component?: string,
  ): void {
    this.o.events.record(
      {
        kind: 'Pod',
        namespace: pod.spec.namespace,
        name: pod.spec.name,
        uid: pod.spec.uid,
        ...(c ? { fieldPath: `spec.${c.spec.init ? 'initContainers' : 'containers'}{${c.spec.name}}` } : {}),
      },
      type,
      reason,
      message,
      component,
    );
  }

  // --- Pod object ---------------------------------------------------------------------------

  render(pod: PodRuntime): AdmittedPod {
    return renderPod(pod, this.o.hostIp, this.o.deviceManager, this.draStatus);
  }

  private publish(pod: PodRuntime): AdmittedPod {
    if (pod.gone) return this.render(pod);
    return this.o.store.upsert(this.render(pod));
  }

  /** The node-resources predicate against the other active pods. */
  private checkNodeResources(spec: PodSpec, pod: PodRuntime | null): void {
    const others = [...this.pods.values()].filter(
      (p) => p !== pod && !isTerminal(p) && !p.gone && !p.unschedulable,
    );
    checkNodeResources(
      spec,
      others.map((p) => p.spec),
      this.o.nodeAllocatable(),
      this.o.deviceManager,
    );
  }
}
