// Simulated pods: admission in the kubelet's order (device allocation per container, init
// containers first, then the CPU pinning, then the node-resources predicate), container
// lifecycles driven by device health (a container whose device turns Unhealthy fails; with a
// restarting policy it crash-loops with exponential back-off, otherwise the pod ends Failed),
// PreStartContainer before every start, and the Pod objects served by the API slice.

import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { AdmissionDecision, TopologyAdmission, TopologyOverride } from '../cm/topologymanager/scope.js';
import type { CpuManager } from '../cm/cpumanager/cpu-manager.js';
import type { DeviceManager } from '../cm/devicemanager/manager.js';
import { KubeletSimError } from '../errors.js';
import type { EventRecorder, EventType } from '../apiserver/events.js';
import type { MemoryManager } from '../cm/memorymanager/memory-manager.js';
import { kubeTime } from '../util/kube-time.js';
import type { KubeObject, ObjectStore } from '../apiserver/object-store.js';
import {
  effectiveRequests,
  parsePodSpec,
  qosClass,
  type ContainerSpec,
  type PodSpec,
  type QosClass,
} from './pod-spec.js';

export interface BackoffOptions {
  /** First back-off after the immediate restart (kubelet: 10 s). */
  initialMs: number;
  /** Cap (kubelet: 5 min). */
  maxMs: number;
  /** A container that ran this long before failing starts over at initialMs (kubelet: 10 min). */
  resetMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 10_000, maxMs: 300_000, resetMs: 600_000 };

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed';

export interface Terminated {
  exitCode: number;
  reason: string;
  message?: string;
  startedAt: Date;
  finishedAt: Date;
  containerId: string;
}

export type ContainerState =
  | { kind: 'waiting'; reason: string; message?: string }
  | { kind: 'running'; startedAt: Date }
  | ({ kind: 'terminated' } & Terminated);

export interface ContainerRuntime {
  spec: ContainerSpec;
  state: ContainerState;
  lastTerminated: Terminated | null;
  restartCount: number;
  /** Next back-off; null means the next failure restarts at once (first failure or after a reset). */
  backoffMs: number | null;
  timer: NodeJS.Timeout | null;
  /** A start attempt is awaiting PreStartContainer. */
  starting: boolean;
  containerId: string | null;
}

export interface PodRuntime {
  spec: PodSpec;
  createdAt: Date;
  startTime: Date | null;
  phase: PodPhase;
  reason?: string;
  message?: string;
  podIp: string;
  qos: QosClass;
  init: ContainerRuntime[];
  app: ContainerRuntime[];
  initDone: boolean;
  rejected: boolean;
  conditions: Map<string, { status: 'True' | 'False'; time: Date }>;
  gone: boolean;
  /** advance() is running / must run once more (a call arrived while it awaited a plugin). */
  advancing: boolean;
  advanceAgain: boolean;
  /** allocatedResourcesStatus frozen when a terminated pod released its devices. */
  finalResourceStatus: Map<string, ResourceStatus[]> | null;
  /** How the resource managers admitted (or refused) the pod: hints, merged affinity, placement. */
  admission: AdmissionDecision | null;
}

interface ResourceStatus {
  name: string;
  resources: { resourceID: string; health: string }[];
}

/** The Pod object as the API serves it. */
export type AdmittedPod = KubeObject;

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
  logger: Logger;
}

const isTerminal = (p: PodRuntime) => p.phase === 'Failed' || p.phase === 'Succeeded';

export class PodManager {
  private readonly pods = new Map<string, PodRuntime>();
  private admission: Promise<unknown> = Promise.resolve();
  private nextIp = 0;
  private readonly log: Logger;

  constructor(private readonly o: PodManagerOptions) {
    this.log = o.logger.child({ component: 'pods' });
    o.deviceManager.on('devices', ({ resource }) => this.onDeviceHealth(resource));
  }

  /** Pods the kubelet considers active (not terminal): what PodResources lists. */
  activePods(): { spec: PodSpec; containers: ContainerSpec[] }[] {
    return [...this.pods.values()]
      .filter((p) => !isTerminal(p) && !p.gone)
      .map((p) => ({ spec: p.spec, containers: reportedContainers(p) }));
  }

  /**
   * Any pod the kubelet knows by name, terminated ones included (PodResources Get uses the pod
   * manager, not the active pods), with the containers PodResources reports.
   */
  findPod(namespace: string, name: string): { spec: PodSpec; containers: ContainerSpec[] } | undefined {
    const p = this.pods.get(`${namespace}/${name}`);
    return p ? { spec: p.spec, containers: reportedContainers(p) } : undefined;
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
    const decision = this.o.topology.newDecision(true, override);
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
    };
    this.pods.set(k, pod);
    const log = this.log.child({ pod: k, uid: spec.uid });
    try {
      await this.o.topology.admit(spec, pod.qos, pod.admission!, false);
      this.checkNodeResources(spec, pod);
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
      throw rejection;
    }
    pod.startTime = new Date();
    log.info(
      { policy: this.o.topology.policy, affinity: pod.admission!.containers.map((c) => c.affinity) },
      'pod admitted',
    );
    this.publish(pod);
    await this.advance(pod);
    return this.publish(pod);
  }

  /** The kubelet's node-resources predicate (GeneralPredicates): reason OutOf<resource>. */
  private checkNodeResources(spec: PodSpec, pod: PodRuntime | null): void {
    const allocatable = this.o.nodeAllocatable();
    const requested = effectiveRequests(spec);
    const others = [...this.pods.values()].filter((p) => p !== pod && !isTerminal(p) && !p.gone);
    if (others.length + 1 > (allocatable.get('pods') ?? Infinity)) {
      throw outOf('pods', 1, others.length, allocatable.get('pods') ?? 0);
    }
    for (const [resource, amount] of requested) {
      if (amount === 0) continue;
      const capacity = allocatable.get(resource) ?? 0;
      const used = others.reduce((sum, p) => sum + (effectiveRequests(p.spec).get(resource) ?? 0), 0);
      // Devices already handed out count as allocatable even if their plugin is gone (sanitizeNodeAllocatable).
      const floor = this.o.deviceManager.isDevicePluginResource(resource)
        ? this.o.deviceManager.allocatedDevices(resource).size
        : 0;
      if (amount + used > Math.max(capacity, floor))
        throw outOf(resource, amount, used, Math.max(capacity, floor));
    }
  }

  async delete(namespace: string, name: string): Promise<void> {
    const k = `${namespace}/${name}`;
    const pod = this.pods.get(k);
    if (!pod) throw new KubeletSimError('NotFound', `pods "${name}" not found`, { reason: 'NotFound' });
    pod.gone = true;
    for (const c of [...pod.init, ...pod.app]) clearTimer(c);
    this.pods.delete(k);
    this.release(pod);
    this.o.store.delete(namespace, name);
    this.log.info({ pod: k }, 'pod deleted; devices freed');
    await Promise.resolve();
  }

  /** Stops every timer (the simulator is shutting down). */
  stop(): void {
    for (const p of this.pods.values()) for (const c of [...p.init, ...p.app]) clearTimer(c);
  }

  /** Frees allocations (e.g. restored from a checkpoint) of pods that are not active (UpdateAllocatedDevices). */
  reconcileAllocations(): void {
    const active = new Set(
      [...this.pods.values()].filter((p) => !isTerminal(p) && !p.gone).map((p) => p.spec.uid),
    );
    for (const uid of this.o.deviceManager.podUids()) if (!active.has(uid)) this.o.deviceManager.freePod(uid);
  }

  private release(pod: PodRuntime): void {
    pod.finalResourceStatus = new Map(
      [...pod.init, ...pod.app].map((c) => [c.spec.name, this.resourceStatus(pod, c)]),
    );
    this.o.deviceManager.freePod(pod.spec.uid);
    this.o.cpuManager.release(pod.spec.uid);
    this.o.memoryManager.release(pod.spec.uid);
  }

  // --- Container lifecycle ------------------------------------------------------------------

  /**
   * Drives the pod forward: init containers in order (each completes as soon as it runs), then
   * every app container. Re-entrant calls while a pass is awaiting a plugin are folded into one
   * more pass, so no container is started twice.
   */
  private async advance(pod: PodRuntime): Promise<void> {
    if (pod.advancing) {
      pod.advanceAgain = true;
      return;
    }
    pod.advancing = true;
    try {
      do {
        pod.advanceAgain = false;
        await this.advanceOnce(pod);
      } while (pod.advanceAgain);
    } finally {
      pod.advancing = false;
    }
    this.settle(pod);
  }

  private async advanceOnce(pod: PodRuntime): Promise<void> {
    if (pod.gone || isTerminal(pod)) return;
    for (const c of pod.init) {
      if (c.state.kind === 'waiting') {
        if (c.timer || c.starting) return;
        await this.attempt(pod, c);
      }
      const now = stateOf(c);
      if (now.kind === 'terminated') {
        if (now.exitCode === 0) continue;
        return; // failed under restartPolicy Never: the pod is Failed
      }
      if (now.kind !== 'running') return;
      if (!c.spec.sidecar) {
        c.state = {
          kind: 'terminated',
          exitCode: 0,
          reason: 'Completed',
          startedAt: now.startedAt,
          finishedAt: new Date(),
          containerId: c.containerId ?? '',
        };
      }
    }
    pod.initDone = true;
    for (const c of pod.app)
      if (c.state.kind === 'waiting' && !c.timer && !c.starting) await this.attempt(pod, c);
  }

  /** One container start: PreStartContainer for each device resource, then run (or fail at once). */
  private async attempt(pod: PodRuntime, c: ContainerRuntime): Promise<void> {
    if (pod.gone || isTerminal(pod) || c.starting) return;
    c.starting = true;
    try {
      for (const a of this.o.deviceManager.containerAllocations(pod.spec.uid, c.spec.name)) {
        try {
          await this.o.deviceManager.preStartContainer(pod.spec.uid, c.spec.name, a.resource);
        } catch (err) {
          const message = err instanceof Error ? err.message : String(err);
          c.state = { kind: 'waiting', reason: 'CreateContainerConfigError', message };
          this.event(pod, c, 'Warning', 'Failed', `Error: ${message}`);
          this.scheduleRestart(pod, c, this.nextBackoff(c), false);
          return;
        }
      }
    } finally {
      c.starting = false;
    }
    if (pod.gone || isTerminal(pod)) return;
    if (c.lastTerminated) c.restartCount++;
    c.containerId = `containerd://${randomBytes(32).toString('hex')}`;
    c.state = { kind: 'running', startedAt: new Date() };
    this.event(pod, c, 'Normal', 'Started', `Started container ${c.spec.name}`);
    const bad = this.unhealthyDevice(pod, c);
    if (bad) this.fail(pod, c, bad);
  }

  private unhealthyDevice(pod: PodRuntime, c: ContainerRuntime): string | null {
    for (const a of this.o.deviceManager.containerAllocations(pod.spec.uid, c.spec.name)) {
      for (const id of a.deviceIds)
        if (this.o.deviceManager.deviceHealth(a.resource, id) !== 'Healthy')
          return `device ${id} of ${a.resource} is unhealthy`;
    }
    return null;
  }

  /** The workload exits 1 because its device is unhealthy. */
  private fail(pod: PodRuntime, c: ContainerRuntime, why: string): void {
    if (c.state.kind !== 'running') return;
    const finishedAt = new Date();
    const terminated: Terminated = {
      exitCode: 1,
      reason: 'Error',
      message: why,
      startedAt: c.state.startedAt,
      finishedAt,
      containerId: c.containerId ?? '',
    };
    this.log.info(
      { pod: `${pod.spec.namespace}/${pod.spec.name}`, container: c.spec.name, why },
      'container failed',
    );
    // Init containers restart unless the pod's policy is Never; sidecars always; app containers
    // unless Never (OnFailure restarts a non-zero exit, like Always).
    const restarts = c.spec.sidecar || pod.spec.restartPolicy !== 'Never';
    if (!restarts) {
      c.state = { kind: 'terminated', ...terminated };
      this.settle(pod);
      return;
    }
    c.lastTerminated = terminated;
    if (finishedAt.getTime() - terminated.startedAt.getTime() >= this.o.backoff.resetMs) c.backoffMs = null;
    if (c.backoffMs === null) {
      // The first failure restarts at once; back-off starts with the next one.
      c.backoffMs = this.o.backoff.initialMs;
      c.state = { kind: 'waiting', reason: 'ContainerCreating' };
      this.scheduleRestart(pod, c, 0, false);
      return;
    }
    this.scheduleRestart(pod, c, this.nextBackoff(c), true);
  }

  /** The current back-off, doubling the next one up to the cap. */
  private nextBackoff(c: ContainerRuntime): number {
    const delay = c.backoffMs ?? this.o.backoff.initialMs;
    c.backoffMs = Math.min(delay * 2, this.o.backoff.maxMs);
    return delay;
  }

  private scheduleRestart(pod: PodRuntime, c: ContainerRuntime, delay: number, crashLoop: boolean): void {
    if (crashLoop) {
      const who = `${pod.spec.name}_${pod.spec.namespace}(${pod.spec.uid})`;
      c.state = {
        kind: 'waiting',
        reason: 'CrashLoopBackOff',
        message: `back-off ${formatDuration(delay)} restarting failed container=${c.spec.name} pod=${who}`,
      };
      this.event(
        pod,
        c,
        'Warning',
        'BackOff',
        `Back-off restarting failed container ${c.spec.name} in pod ${who}`,
      );
    }
    clearTimer(c);
    c.timer = setTimeout(() => {
      c.timer = null;
      this.restart(pod, c).catch((err: unknown) => this.lifecycleError(pod, c, err));
    }, delay);
    c.timer.unref();
    this.settle(pod);
  }

  private async restart(pod: PodRuntime, c: ContainerRuntime): Promise<void> {
    if (pod.gone || isTerminal(pod)) return;
    await this.attempt(pod, c);
    await this.advance(pod);
  }

  /** Device health of `resource` changed: running containers on an unhealthy device fail. */
  private onDeviceHealth(resource: string): void {
    for (const pod of this.pods.values()) {
      if (pod.gone || isTerminal(pod)) continue;
      const uses = [...pod.init, ...pod.app].some((c) =>
        this.o.deviceManager
          .containerAllocations(pod.spec.uid, c.spec.name)
          .some((a) => a.resource === resource),
      );
      if (!uses) continue;
      for (const c of [...pod.init, ...pod.app]) {
        if (c.state.kind !== 'running') continue;
        const bad = this.unhealthyDevice(pod, c);
        if (bad) this.fail(pod, c, bad);
      }
      this.publish(pod);
    }
  }

  /** A simulator bug must not take the process down: log it and leave the container as it is. */
  private lifecycleError(pod: PodRuntime, c: ContainerRuntime, err: unknown): void {
    this.log.error(
      { pod: `${pod.spec.namespace}/${pod.spec.name}`, container: c.spec.name, err: String(err) },
      'container lifecycle step failed',
    );
  }

  /** Recomputes the phase; a pod that just ended frees its devices and CPUs. */
  private settle(pod: PodRuntime): void {
    if (!isTerminal(pod)) {
      pod.phase = this.phaseOf(pod);
      if (isTerminal(pod)) {
        for (const c of [...pod.init, ...pod.app]) clearTimer(c);
        this.release(pod);
      }
    }
    this.publish(pod);
  }

  private phaseOf(pod: PodRuntime): PodPhase {
    const initFailed = pod.init.some((c) => c.state.kind === 'terminated' && c.state.exitCode !== 0);
    if (initFailed) return 'Failed';
    if (!pod.initDone) return 'Pending';
    if (pod.app.every((c) => c.state.kind === 'terminated')) {
      return pod.app.some((c) => c.state.kind === 'terminated' && c.state.exitCode !== 0)
        ? 'Failed'
        : 'Succeeded';
    }
    return pod.app.some(
      (c) => c.state.kind === 'running' || c.lastTerminated !== null || c.state.kind === 'terminated',
    )
      ? 'Running'
      : 'Pending';
  }

  private event(
    pod: PodRuntime,
    c: ContainerRuntime | undefined,
    type: EventType,
    reason: string,
    message: string,
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
    );
  }

  // --- Pod object ---------------------------------------------------------------------------

  private publish(pod: PodRuntime): AdmittedPod {
    if (pod.gone) return this.render(pod);
    return this.o.store.upsert(this.render(pod));
  }

  private condition(
    pod: PodRuntime,
    type: string,
    ok: boolean,
    reason?: string,
    message?: string,
  ): Record<string, unknown> {
    const status = ok ? 'True' : 'False';
    const prev = pod.conditions.get(type);
    const time = prev && prev.status === status ? prev.time : new Date();
    pod.conditions.set(type, { status, time });
    return {
      type,
      status,
      lastProbeTime: null,
      lastTransitionTime: kubeTime(time),
      ...(reason ? { reason } : {}),
      ...(message ? { message } : {}),
    };
  }

  render(pod: PodRuntime): AdmittedPod {
    const { spec } = pod;
    const status: Record<string, unknown> = { phase: pod.phase };
    if (pod.rejected) {
      Object.assign(status, {
        reason: pod.reason,
        message: pod.message,
        startTime: kubeTime(pod.createdAt),
        qosClass: pod.qos,
      });
    } else {
      const unready = pod.app.filter((c) => c.state.kind !== 'running').map((c) => c.spec.name);
      const uninit = pod.init.filter(
        (c) =>
          !(c.state.kind === 'terminated' && c.state.exitCode === 0) &&
          !(c.spec.sidecar && c.state.kind === 'running'),
      );
      const ready = unready.length === 0;
      const done = isTerminal(pod);
      status['conditions'] = [
        this.condition(pod, 'PodReadyToStartContainers', !done),
        this.condition(
          pod,
          'Initialized',
          pod.initDone,
          pod.initDone ? undefined : 'ContainersNotInitialized',
          pod.initDone
            ? undefined
            : `containers with incomplete status: [${uninit.map((c) => c.spec.name).join(' ')}]`,
        ),
        this.condition(
          pod,
          'Ready',
          ready,
          ready ? undefined : done ? 'PodCompleted' : 'ContainersNotReady',
          ready || done ? undefined : `containers with unready status: [${unready.join(' ')}]`,
        ),
        this.condition(
          pod,
          'ContainersReady',
          ready,
          ready ? undefined : done ? 'PodCompleted' : 'ContainersNotReady',
          ready || done ? undefined : `containers with unready status: [${unready.join(' ')}]`,
        ),
        this.condition(pod, 'PodScheduled', true),
      ];
      Object.assign(status, {
        hostIP: this.o.hostIp,
        hostIPs: [{ ip: this.o.hostIp }],
        podIP: pod.podIp,
        podIPs: [{ ip: pod.podIp }],
        startTime: kubeTime(pod.startTime ?? pod.createdAt),
        ...(pod.init.length
          ? { initContainerStatuses: pod.init.map((c) => this.containerStatus(pod, c)) }
          : {}),
        containerStatuses: pod.app.map((c) => this.containerStatus(pod, c)),
        qosClass: pod.qos,
      });
    }
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: spec.name,
        namespace: spec.namespace,
        uid: spec.uid,
        creationTimestamp: kubeTime(pod.createdAt),
        ...(Object.keys(spec.labels).length ? { labels: spec.labels } : {}),
        ...(Object.keys(spec.annotations).length ? { annotations: spec.annotations } : {}),
      },
      spec: spec.rawSpec,
      status,
    };
  }

  /** Per resource, the health of each allocated device (the ResourceHealthStatus feature). */
  private resourceStatus(pod: PodRuntime, c: ContainerRuntime): ResourceStatus[] {
    const frozen = pod.finalResourceStatus?.get(c.spec.name);
    if (frozen) return frozen;
    return this.o.deviceManager.containerAllocations(pod.spec.uid, c.spec.name).map((a) => ({
      name: a.resource,
      resources: a.deviceIds.map((id) => ({
        resourceID: id,
        health: this.o.deviceManager.deviceHealth(a.resource, id),
      })),
    }));
  }

  private containerStatus(pod: PodRuntime, c: ContainerRuntime): Record<string, unknown> {
    const image = String(c.spec.raw['image']);
    const resourceStatus = this.resourceStatus(pod, c);
    return {
      name: c.spec.name,
      state: renderState(c.state),
      lastState: c.lastTerminated ? { terminated: renderTerminated(c.lastTerminated) } : {},
      ready: c.state.kind === 'running' && !c.spec.init,
      restartCount: c.restartCount,
      image,
      imageID: `${image.split(':')[0]}@sha256:${'0'.repeat(64)}`,
      ...(c.containerId ? { containerID: c.containerId } : {}),
      started: c.state.kind === 'running',
      ...(resourceStatus.length ? { allocatedResourcesStatus: resourceStatus } : {}),
    };
  }
}

/** Pod IPs from 10.88.0.0/16, skipping .0 and .1 of each /24. */
function podIpFor(n: number): string {
  return `10.88.${Math.floor(n / 250) % 256}.${(n % 250) + 2}`;
}

/** Restartable init containers (sidecars) first, then app containers, as PodResources lists them. */
function reportedContainers(p: PodRuntime): ContainerSpec[] {
  return [...p.init.filter((c) => c.spec.sidecar), ...p.app].map((c) => c.spec);
}

function newContainer(spec: ContainerSpec): ContainerRuntime {
  return {
    spec,
    state: { kind: 'waiting', reason: spec.init ? 'PodInitializing' : 'ContainerCreating' },
    lastTerminated: null,
    restartCount: 0,
    backoffMs: null,
    timer: null,
    starting: false,
    containerId: null,
  };
}

/** Reads the state afresh (after an await, TypeScript's narrowing of `c.state` is stale). */
function stateOf(c: ContainerRuntime): ContainerState {
  return c.state;
}

function clearTimer(c: ContainerRuntime): void {
  if (c.timer) clearTimeout(c.timer);
  c.timer = null;
}

function renderTerminated(t: Terminated): Record<string, unknown> {
  return {
    exitCode: t.exitCode,
    reason: t.reason,
    ...(t.message ? { message: t.message } : {}),
    startedAt: kubeTime(t.startedAt),
    finishedAt: kubeTime(t.finishedAt),
    containerID: t.containerId,
  };
}

function renderState(s: ContainerState): Record<string, unknown> {
  if (s.kind === 'running') return { running: { startedAt: kubeTime(s.startedAt) } };
  if (s.kind === 'waiting')
    return { waiting: { reason: s.reason, ...(s.message ? { message: s.message } : {}) } };
  return { terminated: renderTerminated(s) };
}

/** Go's time.Duration formatting for the back-off message (10s, 1m20s, 250ms). */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const s = ms / 1000;
  if (s < 60) return `${Number.isInteger(s) ? s : s.toFixed(3).replace(/0+$/, '')}s`;
  const m = Math.floor(s / 60);
  const rest = s - m * 60;
  return `${m}m${Number.isInteger(rest) ? rest : rest.toFixed(3).replace(/0+$/, '')}s`;
}

/** Any admission failure as the kubelet reports it: our own errors as they are, the rest as UnexpectedAdmissionError. */
function asRejection(err: unknown): KubeletSimError {
  return err instanceof KubeletSimError
    ? err
    : new KubeletSimError(
        'UnexpectedAdmissionError',
        `Allocate failed due to ${err instanceof Error ? err.message : String(err)}, which is unexpected`,
        { cause: err },
      );
}

function outOf(resource: string, requested: number, used: number, capacity: number): KubeletSimError {
  return new KubeletSimError(
    'OutOfResource',
    `Node didn't have enough resource: ${resource}, requested: ${requested}, used: ${used}, capacity: ${capacity}`,
    { reason: `OutOf${resource}` },
  );
}
