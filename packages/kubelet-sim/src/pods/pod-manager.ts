// The kubelet's pods (pkg/kubelet/pod/pod_manager.go, and kubelet.go's HandlePodAdditions →
// canAdmitPod; release-1.33): pods come from the control API, are admitted one at a time in the
// kubelet's order — the resource managers through the Topology Manager's admit handler (device
// allocation per container, init containers first, CPUs, memory), then the node-resources
// predicate — and a rejected pod stays visible as Failed. Admitted pods are driven by the pod
// workers (pod-workers.ts); their objects (pod-status.ts) are served by the API slice.

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
import { asRejection, fromTopology, KubeletSimError } from '../errors.js';
import type { EventRecorder, EventType } from '../apiserver/events.js';
import type { ObjectStore } from '../apiserver/object-store.js';
import { parsePodSpec, type ContainerSpec, type PodSpec } from './pod-spec.js';
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
  logger: Logger;
}

export class PodManager {
  private readonly pods = new Map<string, PodRuntime>();
  private admission: Promise<unknown> = Promise.resolve();
  private nextIp = 0;
  private readonly log: Logger;
  private readonly workers: PodWorkers;

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
    });
    o.deviceManager.on('devices', ({ resource }) =>
      this.workers.onDeviceHealth(resource, this.pods.values()),
    );
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
    };
    this.pods.set(k, pod);
    // The pod arrives bound to this node: what the scheduler records when it binds one.
    this.event(
      pod,
      undefined,
      'Normal',
      'Scheduled',
      `Successfully assigned ${spec.namespace}/${spec.name} to ${this.o.nodeName}`,
      'default-scheduler',
    );
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
    await this.workers.advance(pod);
    return this.publish(pod);
  }

  async delete(namespace: string, name: string): Promise<void> {
    const k = `${namespace}/${name}`;
    const pod = this.pods.get(k);
    if (!pod) throw new KubeletSimError('NotFound', `pods "${name}" not found`, { reason: 'NotFound' });
    pod.gone = true;
    for (const c of [...pod.init, ...pod.app]) {
      clearTimer(c);
      if (c.state.kind === 'running') {
        this.event(pod, c, 'Normal', 'Killing', `Stopping container ${c.spec.name}`);
        c.log.write('received SIGTERM; exiting with code 0');
      }
      c.log.end();
    }
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
      [...pod.init, ...pod.app].map((c) => [c.spec.name, resourceStatus(pod, c, this.o.deviceManager)]),
    );
    this.o.deviceManager.freePod(pod.spec.uid);
    this.o.cpuManager.release(pod.spec.uid);
    this.o.memoryManager.release(pod.spec.uid);
  }

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
    return renderPod(pod, this.o.hostIp, this.o.deviceManager);
  }

  private publish(pod: PodRuntime): AdmittedPod {
    if (pod.gone) return this.render(pod);
    return this.o.store.upsert(this.render(pod));
  }

  /** The node-resources predicate against the other active pods. */
  private checkNodeResources(spec: PodSpec, pod: PodRuntime | null): void {
    const others = [...this.pods.values()].filter((p) => p !== pod && !isTerminal(p) && !p.gone);
    checkNodeResources(
      spec,
      others.map((p) => p.spec),
      this.o.nodeAllocatable(),
      this.o.deviceManager,
    );
  }
}
