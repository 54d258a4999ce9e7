// Fault scenarios: a timeline of steps (fail a NUMA node, fail N random devices, flap a device, heal,
// restart the kubelet) run against this node's fault store, bounded by a TTL after which everything
// the scenario did is undone. Devices are device-plugin devices and the devices of the DRA drivers
// this gateway runs (`resource` = the driver name, the device's source ID); a step's `taint` applies
// to the DRA devices it fails. The same document is accepted by POST /api/v1/scenarios (JSON or YAML)
// and by the demo's `--scenario FILE`; steps aimed at another node are skipped here. Format: docs/API.md.
import { randomUUID } from 'node:crypto';
import type {
  DeviceState,
  FaultRecord,
  NodeSnapshot,
  ScenarioDocument,
  ScenarioState,
  ScenarioStep,
  ScenarioStepState,
  StepStatus,
} from '@plugboard/api';
import type { FaultClearCause, FaultStore } from './fault-store.js';
import { GatewayError } from '../errors.js';
import { isOwnResource } from '../model/observed.js';

/**
 * A device a scenario can fail: a device-plugin device (`resource`, its ID) or a device of a DRA
 * driver this gateway runs (`resource` = the driver, `id` = the source ID, `dra: true`).
 */
export type ScenarioDevice = Pick<DeviceState, 'resource' | 'id' | 'replicaOf' | 'numaNodes' | 'health'> & {
  dra?: boolean;
};

/** This node's devices a scenario can fail: the device plugins' and the in-process DRA drivers'. */
export function scenarioDevices(s: NodeSnapshot): ScenarioDevice[] {
  // Not another device plugin's devices (observed): only their plugin can mark them unhealthy.
  const out: ScenarioDevice[] = Object.values(s.devices).filter(isOwnResource);
  for (const d of Object.values(s.dra?.devices ?? {})) {
    if (d.sourceId === null) continue;
    out.push({
      resource: d.driver,
      id: d.sourceId,
      replicaOf: null,
      numaNodes: d.numaNodes,
      health: d.health === 'Healthy' ? 'Healthy' : 'Unhealthy',
      dra: true,
    });
  }
  return out;
}

export interface ScenarioRunnerOptions {
  nodeName: string;
  faults: FaultStore;
  /** Devices of this node, as the model sees them now. */
  devices: () => ScenarioDevice[];
  /** Longest a scenario may run when it gives no ttlSeconds. */
  defaultTailMs?: number;
  now?: () => Date;
  onStep?: (scenario: ScenarioState, step: ScenarioStepState) => void;
}

/** Deterministic PRNG (mulberry32) so `seed` makes "N random devices" reproducible. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Target {
  resource: string;
  deviceId: string;
  dra: boolean;
}

interface Running {
  state: ScenarioState;
  timers: Set<NodeJS.Timeout>;
  random: () => number;
}

export class ScenarioRunner {
  private readonly running = new Map<string, Running>();
  private readonly now: () => Date;

  constructor(private readonly options: ScenarioRunnerOptions) {
    this.now = options.now ?? (() => new Date());
  }

  list(): ScenarioState[] {
    return [...this.running.values()].map((r) => this.view(r));
  }

  get(id: string): ScenarioState | undefined {
    const r = this.running.get(id);
    return r && this.view(r);
  }

  start(doc: ScenarioDocument): ScenarioState {
    const id = randomUUID();
    const lastAt = Math.max(
      ...doc.steps.map((s) => s.at + (s.action === 'flap-device' ? (s.duration ?? 0) : 0)),
    );
    const ttlMs = doc.ttlSeconds ? doc.ttlSeconds * 1000 : lastAt + (this.options.defaultTailMs ?? 60_000);
    const start = this.now();
    const running: Running = {
      state: {
        id,
        name: doc.name,
        startedAt: start.toISOString(),
        expiresAt: new Date(start.getTime() + ttlMs).toISOString(),
        steps: doc.steps.map((s) => ({
          at: s.at,
          action: s.action,
          node: s.node ?? null,
          status: 'pending',
          detail: null,
        })),
        faultIds: [],
      },
      timers: new Set(),
      random: doc.seed === undefined ? Math.random : prng(doc.seed),
    };
    this.running.set(id, running);
    this.later(running, ttlMs, () => this.stop(id, 'expired'));
    doc.steps.forEach((step, i) => {
      if (step.at === 0) this.runStep(running, step, i);
      else this.later(running, step.at, () => this.runStep(running, step, i));
    });
    return this.view(running);
  }

  /** Stops a scenario and clears every fault it holds. */
  stop(id: string, cause: FaultClearCause = 'scenario-stopped'): boolean {
    const r = this.running.get(id);
    if (!r) return false;
    this.running.delete(id);
    for (const t of r.timers) clearTimeout(t);
    for (const f of this.options.faults.list()) {
      if (f.scenarioId === id)
        this.options.faults.remove(f.id, cause === 'expired' ? 'expired' : 'scenario-stopped');
    }
    return true;
  }

  stopAll(): number {
    const ids = [...this.running.keys()];
    for (const id of ids) this.stop(id);
    return ids.length;
  }

  /** Cancels timers without clearing faults (shutdown: persisted faults keep their TTL). */
  close(): void {
    for (const r of this.running.values()) for (const t of r.timers) clearTimeout(t);
    this.running.clear();
  }

  private view(r: Running): ScenarioState {
    const faultIds = this.options.faults
      .list()
      .filter((f) => f.scenarioId === r.state.id)
      .map((f) => f.id);
    return { ...r.state, steps: r.state.steps.map((s) => ({ ...s })), faultIds };
  }

  private later(r: Running, ms: number, fn: () => void): NodeJS.Timeout {
    const t = setTimeout(() => {
      r.timers.delete(t);
      fn();
    }, ms);
    t.unref();
    r.timers.add(t);
    return t;
  }

  private finish(r: Running, i: number, status: StepStatus, detail: string): void {
    const s = r.state.steps[i]!;
    s.status = status;
    s.detail = detail;
    this.options.onStep?.(this.view(r), { ...s });
  }

  /** Physical targets only: failing a replica means failing its device, which fails every replica. */
  private targets(filter: (d: ScenarioDevice) => boolean): Target[] {
    const seen = new Set<string>();
    const out: Target[] = [];
    for (const d of this.options.devices()) {
      if (!filter(d)) continue;
      const id = d.replicaOf ?? d.id;
      const key = `${d.resource}/${id}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ resource: d.resource, deviceId: id, dra: d.dra === true });
    }
    return out;
  }

  private inject(r: Running, targets: Target[], why: string, taint?: FaultRecord['taint']): string[] {
    const held = new Set(
      this.options.faults
        .list()
        .filter((f) => f.scenarioId === r.state.id)
        .map((f) => `${f.resource}/${f.deviceId}`),
    );
    const ttlSeconds = Math.max(1, Math.ceil((Date.parse(r.state.expiresAt) - this.now().getTime()) / 1000));
    const ids: string[] = [];
    for (const t of targets) {
      if (held.has(`${t.resource}/${t.deviceId}`)) continue;
      const fault = {
        resource: t.resource,
        deviceId: t.deviceId,
        reason: why,
        ttlSeconds,
        scenarioId: r.state.id,
        // A device plugin has no taints: the step's taint applies to the DRA devices it fails.
        ...(t.dra && taint ? { taint } : {}),
      };
      ids.push(this.options.faults.add(fault).id);
    }
    return ids;
  }

  private heal(r: Running, match: (resource: string, deviceId: string) => boolean): number {
    let n = 0;
    for (const f of this.options.faults.list()) {
      if (f.scenarioId === r.state.id && match(f.resource, f.deviceId)) {
        this.options.faults.remove(f.id, 'scenario-stopped');
        n++;
      }
    }
    return n;
  }

  private runStep(r: Running, step: ScenarioStep, i: number): void {
    if (!this.running.has(r.state.id)) return;
    if (step.node && step.node !== this.options.nodeName) {
      this.finish(
        r,
        i,
        'skipped',
        `step targets node ${step.node}, this gateway serves ${this.options.nodeName}`,
      );
      return;
    }
    try {
      const tag = `scenario ${r.state.name}`;
      switch (step.action) {
        case 'fail-numa-node': {
          const t = this.targets(
            (d) => d.numaNodes.includes(step.numaNode) && (!step.resource || d.resource === step.resource),
          );
          if (t.length === 0) throw new GatewayError('not-found', `no device on NUMA node ${step.numaNode}`);
          const ids = this.inject(
            r,
            t,
            step.reason ?? `NUMA node ${step.numaNode} failed (${tag})`,
            step.taint,
          );
          this.finish(r, i, 'done', `${ids.length} device(s) on NUMA node ${step.numaNode} failed`);
          return;
        }
        case 'heal-numa-node': {
          const onNode = new Set(
            this.targets(
              (d) => d.numaNodes.includes(step.numaNode) && (!step.resource || d.resource === step.resource),
            ).map((t) => `${t.resource}/${t.deviceId}`),
          );
          const n = this.heal(r, (res, id) => onNode.has(`${res}/${id}`));
          this.finish(r, i, 'done', `${n} fault(s) on NUMA node ${step.numaNode} healed`);
          return;
        }
        case 'fail-devices': {
          let t = this.targets(
            (d) =>
              d.resource === step.resource &&
              (!step.deviceIds || step.deviceIds.includes(d.replicaOf ?? d.id)),
          );
          if (step.deviceIds) {
            const known = new Set(t.map((x) => x.deviceId));
            const unknown = step.deviceIds.filter((id) => !known.has(id));
            if (unknown.length)
              throw new GatewayError(
                'not-found',
                `unknown device(s) of ${step.resource}: ${unknown.join(', ')}`,
              );
          } else {
            const healthy = new Set(
              this.options
                .devices()
                .filter((d) => d.health === 'Healthy')
                .map((d) => `${d.resource}/${d.replicaOf ?? d.id}`),
            );
            const pool = t.filter((x) => healthy.has(`${x.resource}/${x.deviceId}`));
            const count = step.count ?? 0;
            if (pool.length < count) {
              throw new GatewayError(
                'conflict',
                `${step.resource} has ${pool.length} healthy device(s), ${count} requested`,
              );
            }
            for (let k = pool.length - 1; k > 0; k--) {
              const j = Math.floor(r.random() * (k + 1));
              [pool[k], pool[j]] = [pool[j]!, pool[k]!];
            }
            t = pool.slice(0, count);
          }
          const ids = this.inject(r, t, step.reason ?? `device failure (${tag})`, step.taint);
          this.finish(
            r,
            i,
            'done',
            `failed ${t.map((x) => x.deviceId).join(', ')} (${ids.length} new fault(s))`,
          );
          return;
        }
        case 'heal-devices': {
          const n = this.heal(
            r,
            (res, id) =>
              (!step.resource || res === step.resource) && (!step.deviceIds || step.deviceIds.includes(id)),
          );
          this.finish(r, i, 'done', `${n} fault(s) healed`);
          return;
        }
        case 'heal-all': {
          const n = this.heal(r, () => true);
          this.finish(r, i, 'done', `${n} fault(s) healed`);
          return;
        }
        case 'flap-device': {
          const t = this.targets(
            (d) => d.resource === step.resource && (d.replicaOf ?? d.id) === step.deviceId,
          );
          if (t.length === 0)
            throw new GatewayError('not-found', `unknown device ${step.resource}/${step.deviceId}`);
          const why = step.reason ?? `flapping every ${step.periodMs} ms (${tag})`;
          const endAt =
            step.duration !== undefined ? this.now().getTime() + step.duration : Number.POSITIVE_INFINITY;
          const toggle = (): void => {
            if (!this.running.has(r.state.id)) return;
            const healed = this.heal(r, (res, id) => res === step.resource && id === step.deviceId);
            if (this.now().getTime() >= endAt) return;
            if (healed === 0) this.inject(r, t, why);
            this.later(r, step.periodMs, toggle);
          };
          toggle();
          this.finish(r, i, 'done', `flapping ${step.resource}/${step.deviceId} every ${step.periodMs} ms`);
          return;
        }
        case 'restart-kubelet':
          this.finish(
            r,
            i,
            'skipped',
            'the gateway cannot restart the kubelet; the demo runner (npm start -- --scenario) does',
          );
          return;
      }
    } catch (err) {
      this.finish(r, i, 'failed', (err as Error).message);
    }
  }
}
