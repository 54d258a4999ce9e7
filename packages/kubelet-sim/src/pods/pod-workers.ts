// Driving each admitted pod (the kubelet's pod workers → syncPod → the runtime manager's SyncPod,
// pkg/kubelet/pod_workers.go and kuberuntime/kuberuntime_manager.go; release-1.33): init
// containers in order (each completes as soon as it runs, sidecars keep running), then every app
// container; PreStartContainer before every start (GetDeviceRunContainerOptions); a container whose
// device turns Unhealthy exits 1, and with a restarting policy it crash-loops with the kubelet's
// exponential back-off (doBackOff), otherwise the pod ends Failed. No containers really run.
// Before the first container, the pod's sandbox is created — after its ResourceClaims are prepared
// (kuberuntime_manager.go SyncPod: PrepareDynamicResources before createPodSandbox); a failure
// stops the sync there and the pod is synced again later, as the pod workers resync it.

import { newContainerId } from '../kuberuntime/runtime.js';
import type { Logger } from 'pino';
import { Backoff } from '@plugboard/apimachinery';
import type { DeviceManager } from '../cm/devicemanager/manager.js';
import type { EventType } from '../apiserver/events.js';
import {
  clearTimer,
  isTerminal,
  stateOf,
  type BackoffOptions,
  type ContainerRuntime,
  type PodPhase,
  type PodRuntime,
  type Terminated,
} from './runtime.js';

export interface PodWorkersOptions {
  devices: DeviceManager;
  backoff: BackoffOptions;
  log: Logger;
  /** Records a core/v1 Event about the pod (or one of its containers). */
  event: (
    pod: PodRuntime,
    c: ContainerRuntime | undefined,
    type: EventType,
    reason: string,
    message: string,
  ) => void;
  /** Writes the pod's object to the API slice. */
  publish: (pod: PodRuntime) => void;
  /** Frees what a pod that just ended holds. */
  release: (pod: PodRuntime) => void;
  /** What a starting container finds in its environment (its devices, CPUs, memory), as log lines. */
  environment: (pod: PodRuntime, c: ContainerRuntime) => string[];
  /**
   * Creates the pod sandbox (preparing its ResourceClaims first); false when that failed and a
   * later sync was scheduled.
   */
  prepareSandbox: (pod: PodRuntime) => Promise<boolean>;
  /** Why a container's DRA devices keep it from running (an unhealthy device), or null. */
  draUnhealthy: (pod: PodRuntime, c: ContainerRuntime) => string | null;
}

export class PodWorkers {
  constructor(private readonly o: PodWorkersOptions) {}

  /**
   * Drives the pod forward: init containers in order (each completes as soon as it runs), then
   * every app container. Re-entrant calls while a pass is awaiting a plugin are folded into one
   * more pass, so no container is started twice.
   */
  async advance(pod: PodRuntime): Promise<void> {
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
    if (!pod.sandboxReady) {
      if (pod.syncTimer || !(await this.o.prepareSandbox(pod))) return;
      if (pod.gone || isTerminal(pod)) return;
    }
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
        c.log.write('exiting with code 0 (init container completed)');
        c.log.end();
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
      for (const a of this.o.devices.containerAllocations(pod.spec.uid, c.spec.name)) {
        try {
          await this.o.devices.preStartContainer(pod.spec.uid, c.spec.name, a.resource);
        } catch (err) {
          const message = err instanceof Error ? err.message : String(err);
          c.state = { kind: 'waiting', reason: 'CreateContainerConfigError', message };
          this.o.event(pod, c, 'Warning', 'Failed', `Error: ${message}`);
          this.scheduleRestart(pod, c, this.nextBackoff(c), false);
          return;
        }
      }
    } finally {
      c.starting = false;
    }
    if (pod.gone || isTerminal(pod)) return;
    if (c.lastTerminated) c.restartCount++;
    if (c.containerId) c.log.rotate();
    c.containerId = newContainerId();
    // What the kubelet records for a start (kuberuntime_container.go startContainer): the image is
    // "already present" (nothing is pulled), the container is created, then started.
    const image = typeof c.spec.raw['image'] === 'string' ? c.spec.raw['image'] : '';
    this.o.event(pod, c, 'Normal', 'Pulled', `Container image "${image}" already present on machine`);
    this.o.event(pod, c, 'Normal', 'Created', `Created container: ${c.spec.name}`);
    c.state = { kind: 'running', startedAt: new Date() };
    this.o.event(pod, c, 'Normal', 'Started', `Started container ${c.spec.name}`);
    c.log.write(
      `plugboard kubelet-sim: container ${c.spec.name} of pod ${pod.spec.namespace}/${pod.spec.name} started (${c.containerId}, restart ${c.restartCount})`,
    );
    for (const line of this.o.environment(pod, c)) c.log.write(line);
    const bad = this.unhealthyDevice(pod, c);
    if (bad) this.fail(pod, c, bad);
  }

  private unhealthyDevice(pod: PodRuntime, c: ContainerRuntime): string | null {
    for (const a of this.o.devices.containerAllocations(pod.spec.uid, c.spec.name)) {
      for (const id of a.deviceIds)
        if (this.o.devices.deviceHealth(a.resource, id) !== 'Healthy')
          return `device ${id} of ${a.resource} is unhealthy`;
    }
    return this.o.draUnhealthy(pod, c);
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
    this.o.log.info(
      { pod: `${pod.spec.namespace}/${pod.spec.name}`, container: c.spec.name, why },
      'container failed',
    );
    c.log.write(`fatal: ${why}; exiting with code 1`, finishedAt);
    c.log.end();
    // Init containers restart unless the pod's policy is Never; sidecars always; app containers
    // unless Never (OnFailure restarts a non-zero exit, like Always).
    const restarts = c.spec.sidecar || pod.spec.restartPolicy !== 'Never';
    if (!restarts) {
      c.state = { kind: 'terminated', ...terminated };
      this.settle(pod);
      return;
    }
    c.lastTerminated = terminated;
    if (finishedAt.getTime() - terminated.startedAt.getTime() >= this.o.backoff.resetMs) c.backoff = null;
    if (c.backoff === null) {
      // The first failure restarts at once; back-off starts with the next one.
      c.backoff = this.crashLoopBackoff();
      c.state = { kind: 'waiting', reason: 'ContainerCreating' };
      this.scheduleRestart(pod, c, 0, false);
      return;
    }
    this.scheduleRestart(pod, c, this.nextBackoff(c), true);
  }

  /** The current back-off, doubling the next one up to the cap. */
  private nextBackoff(c: ContainerRuntime): number {
    c.backoff ??= this.crashLoopBackoff();
    return c.backoff.step();
  }

  private crashLoopBackoff(): Backoff {
    const { initialMs, maxMs } = this.o.backoff;
    return new Backoff({ duration: initialMs, factor: 2, steps: Infinity, cap: maxMs });
  }

  private scheduleRestart(pod: PodRuntime, c: ContainerRuntime, delay: number, crashLoop: boolean): void {
    if (crashLoop) {
      const who = `${pod.spec.name}_${pod.spec.namespace}(${pod.spec.uid})`;
      c.state = {
        kind: 'waiting',
        reason: 'CrashLoopBackOff',
        message: `back-off ${formatDuration(delay)} restarting failed container=${c.spec.name} pod=${who}`,
      };
      this.o.event(
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

  /** The health of a pod's DRA devices changed: running containers on an unhealthy one fail. */
  onPodHealth(pod: PodRuntime): void {
    if (pod.gone || isTerminal(pod)) return;
    for (const c of [...pod.init, ...pod.app]) {
      if (c.state.kind !== 'running') continue;
      const bad = this.unhealthyDevice(pod, c);
      if (bad) this.fail(pod, c, bad);
    }
    this.o.publish(pod);
  }

  /** Device health of `resource` changed: running containers on an unhealthy device fail. */
  onDeviceHealth(resource: string, pods: Iterable<PodRuntime>): void {
    for (const pod of pods) {
      if (pod.gone || isTerminal(pod)) continue;
      const uses = [...pod.init, ...pod.app].some((c) =>
        this.o.devices.containerAllocations(pod.spec.uid, c.spec.name).some((a) => a.resource === resource),
      );
      if (!uses) continue;
      for (const c of [...pod.init, ...pod.app]) {
        if (c.state.kind !== 'running') continue;
        const bad = this.unhealthyDevice(pod, c);
        if (bad) this.fail(pod, c, bad);
      }
      this.o.publish(pod);
    }
  }

  /** A simulator bug must not take the process down: log it and leave the container as it is. */
  private lifecycleError(pod: PodRuntime, c: ContainerRuntime, err: unknown): void {
    this.o.log.error(
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
        this.o.release(pod);
      }
    }
    this.o.publish(pod);
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
