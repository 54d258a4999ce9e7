// The kubelet-sim control API as an optional source, reached through the kubeconfig's server: per
// pod the admission decision (hints per provider, merged hint, result) that a real kubelet only
// writes to its log, the settings too (used when configz cannot be read), and admitting a previewed
// pod. Against a real API server (or a kubelet-sim started without it) `/control/v1/state` does not
// exist: the source says so once and checks again rarely; settings then come from configz alone and
// placement stays a prediction. This is the kubelet topology source of kubelet-topology.ts.
import type { Logger } from 'pino';
import type { AdmissionView } from '@plugboard/api';
import { GatewayError } from '../errors.js';
import type { KubeClient } from './kube-client.js';
import type { ApiServerRequest, ApiServerResponse } from './api-server-request.js';
import { PollLoop } from './poll-loop.js';
import type { KubeletTopologyListener, KubeletTopologySource, PlacementAnswer } from './kubelet-topology.js';

export interface KubeletControlOptions {
  /** The API server URL from the kubeconfig, for log lines (a kubelet-sim serves /control/v1/ there). */
  server: string;
  request: ApiServerRequest;
  intervalMs: number;
  timeoutMs: number;
  /** null with a reason when the control API is not there (a real cluster) or unreachable. */
  onState: KubeletTopologyListener;
  logger: Logger;
}

/** kubelet-sim's GET /control/v1/state?view=admissions (structurally typed). */
interface SimState {
  node?: {
    topologyManagerPolicy?: string;
    topologyManagerScope?: string;
    cpuManagerPolicy?: string;
    memoryManagerPolicy?: string;
    reservedCpus?: number[];
  };
  pods?: { namespace: string; name: string; admission?: Omit<AdmissionView, 'source'> | null }[];
}

/** Why the kubelet's settings are unknown until the first answer. */
export const KUBELET_SIM_CHECKING = 'checking the kubeconfig server for a kubelet-sim control API';

/** How long to wait before asking again when the server has no control API (a real cluster). */
const ABSENT_RECHECK_MS = 60_000;

export class KubeletControl implements KubeletTopologySource {
  private readonly loop = new PollLoop(() => this.poll());
  private etag: string | null = null;
  private admissions = new Map<string, { text: string; view: AdmissionView }>();
  available = false;
  reason: string | null = 'not checked yet';

  constructor(private readonly o: KubeletControlOptions) {}

  start(): void {
    this.loop.start();
  }

  stop(): void {
    this.loop.stop();
  }

  /** Poll again shortly (a pod was just admitted or rejected). */
  pollSoon(delayMs = 20): void {
    this.loop.pollSoon(delayMs);
  }

  /** One poll; answers the delay before the next. */
  private async poll(): Promise<number> {
    let next = this.o.intervalMs;
    try {
      // The admissions view changes only when a pod is admitted, rejected or removed — not on every
      // health change — and its ETag lets an unchanged state answer 304 without a body.
      const headers: Record<string, string> =
        this.available && this.etag ? { 'if-none-match': this.etag } : {};
      const res = await this.o.request('GET', '/control/v1/state?view=admissions', {
        headers,
        timeoutMs: this.o.timeoutMs,
      });
      if (res.status === 304) {
        // unchanged
      } else if (res.status === 404 || !res.contentType.includes('json')) {
        this.unavailable('the Kubernetes API server is not a kubelet-sim (no /control/v1/state)');
        next = ABSENT_RECHECK_MS;
      } else if (res.status < 200 || res.status > 299) {
        this.unavailable(`GET /control/v1/state answered HTTP ${res.status}`);
      } else if (!res.etag || res.etag !== this.etag || !this.available) {
        this.accept(res.body, res.etag);
      }
    } catch (err) {
      this.unavailable(`cannot reach ${this.o.server}: ${(err as Error).message}`);
    }
    return next;
  }

  private unavailable(reason: string): void {
    if (this.available || this.reason !== reason) {
      this.o.logger.info({ reason }, 'kubelet-sim control API unavailable: no admission decisions, no admit');
      this.available = false;
      this.reason = reason;
      this.etag = null;
      this.o.onState(null, reason);
    }
  }

  private accept(text: string, etag: string | null): void {
    let state: SimState;
    try {
      state = JSON.parse(text) as SimState;
    } catch {
      return this.unavailable('GET /control/v1/state did not answer JSON');
    }
    const node = state.node;
    if (!node?.topologyManagerPolicy)
      return this.unavailable('GET /control/v1/state has no Topology Manager policy');
    this.etag = etag;
    // Keep each pod's decision object while its content is unchanged, so the model reuses pod states.
    const next = new Map<string, { text: string; view: AdmissionView }>();
    for (const p of state.pods ?? []) {
      if (!p.admission) continue;
      const key = `${p.namespace}/${p.name}`;
      const t = JSON.stringify(p.admission);
      const prev = this.admissions.get(key);
      next.set(
        key,
        prev && prev.text === t ? prev : { text: t, view: { source: 'kubelet-sim', ...p.admission } },
      );
    }
    this.admissions = next;
    if (!this.available) this.o.logger.info({ server: this.o.server }, 'kubelet-sim control API found');
    this.available = true;
    this.reason = null;
    this.o.onState(
      {
        topologyManagerPolicy: node.topologyManagerPolicy,
        topologyManagerScope: node.topologyManagerScope ?? 'container',
        cpuManagerPolicy: node.cpuManagerPolicy ?? 'none',
        memoryManagerPolicy: node.memoryManagerPolicy ?? 'None',
        reservedCpuIds: [...(node.reservedCpus ?? [])],
        admissions: new Map([...next].map(([k, v]) => [k, v.view])),
      },
      null,
    );
  }

  /** Admits a pod through kubelet-sim (`POST /control/v1/pods`); its status and body pass through. */
  async admit(pod: unknown): Promise<PlacementAnswer> {
    if (!this.available) {
      throw new GatewayError(
        'unavailable',
        `admitting a pod needs kubelet-sim's control API behind the kubeconfig (${this.reason ?? 'not available'})`,
      );
    }
    let res: ApiServerResponse;
    try {
      res = await this.o.request('POST', '/control/v1/pods', {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(pod),
        timeoutMs: Math.max(this.o.timeoutMs, 30_000),
      });
    } catch (err) {
      throw new GatewayError('unavailable', `cannot reach the kubelet-sim: ${(err as Error).message}`, {
        cause: err,
      });
    }
    this.pollSoon();
    return { status: res.status, contentType: res.contentType || 'application/json', body: res.body };
  }
}

/**
 * The kubelet-sim source for a kubeconfig's API server (a kubelet-sim serves its control API there);
 * null without a kubeconfig (in-cluster, the server is a real API server).
 */
export function kubeletSimSource(
  kube: KubeClient,
  request: ApiServerRequest,
  options: Omit<KubeletControlOptions, 'server' | 'request'>,
): KubeletTopologySource | null {
  const server = kube.mode === 'kubeconfig' ? kube.kc.getCurrentCluster()?.server : undefined;
  if (!server) return null;
  return new KubeletControl({ ...options, server, request });
}
