// The Kubernetes API as a source: informers (list + watch) for this Node and the Pods bound to it,
// and for DRA (with `request`): this node's ResourceSlices, every ResourceClaim, DeviceTaintRules and
// the unscheduled pods with claims that wait for this node; relisting on 410 Gone (client-node's
// ListWatch does that) and restarting with backoff on any other error — never crashing the gateway.
// A DRA kind the API server does not serve (404) or lets the gateway not read (403) leaves that part
// of the view empty, says why in `dra.notServed`, and is asked again after maxBackoffMs. Also posts
// Events on the Node (health transitions, faults), rate-limited.
// The one module of the gateway that kube-client.ts loads lazily with @kubernetes/client-node: it
// re-exports the connection (kube-connection.ts: kubeconfig, plain requests) and the authorizer's
// reviews (kube-reviewer.ts), which need the client too.
import {
  CoreV1Api,
  type KubeConfig,
  ListWatch,
  Watch,
  type CoreV1Event,
  type KubernetesListObject,
  type KubernetesObject,
  type V1Node,
  type V1Pod,
} from '@kubernetes/client-node';
import { Backoff } from '@plugboard/apimachinery';
import type { KubeInput } from '../model/build.js';
import type { DeviceClass, DeviceTaintRule, ResourceClaim, ResourceSlice } from '@plugboard/k8s-api';
import type { DraKubeInput } from '../model/dra-objects.js';
import type { ApiServerRequest } from './api-server-request.js';
import type { SourceState } from '@plugboard/api';
import { sameSourceState } from '../model/source-state.js';

export { createApiServerRequest, loadKubeConfig } from './kube-connection.js';
export { createKubeReviewer } from './kube-reviewer.js';

export interface KubeSourceOptions {
  kc: KubeConfig;
  /** Plain API requests: with it, the DRA kinds are watched too (read raw, see model/dra-objects.ts). */
  request?: ApiServerRequest;
  nodeName: string;
  maxBackoffMs: number;
  onChange: (input: KubeInput) => void;
  onState: (state: SourceState) => void;
  onError?: (operation: string, message: string) => void;
  now?: () => Date;
}

interface Informer<T extends KubernetesObject> {
  lw: ListWatch<T>;
  failures: number;
  /** The restart backoff of the current run of failures (made at its first failure). */
  retry: Backoff | null;
  /** Bumped on every error; a start() during which it moved did not succeed. */
  errors: number;
  timer: NodeJS.Timeout | null;
  synced: boolean;
  /** A DRA kind: 404/403 leave it empty (`notServed`) instead of failing the source. */
  optional: string | null;
  notServed: string | null;
}

/** The DRA informers and the model input built from them (rebuilt only when one of them changed). */
interface DraInformers {
  slices: Informer<ResourceSlice & KubernetesObject>;
  claims: Informer<ResourceClaim & KubernetesObject>;
  taintRules: Informer<DeviceTaintRule & KubernetesObject>;
  deviceClasses: Informer<DeviceClass & KubernetesObject>;
  waitingPods: Informer<V1Pod>;
  input: DraKubeInput | null;
  waiting: readonly V1Pod[] | null;
}

const RESOURCE_API = '/apis/resource.k8s.io/v1';
const HOSTNAME_LABEL = 'kubernetes.io/hostname';

/**
 * An unscheduled pod with ResourceClaims that can only go to `node`: nominated there, or every way
 * of scheduling it names the node (nodeSelector hostname, required node affinity on the hostname
 * or metadata.name). Its claims are this node's business while they are pending.
 */
export function waitsForNode(pod: V1Pod, node: string): boolean {
  if (!pod.spec?.resourceClaims?.length || pod.spec.nodeName) return false;
  if (pod.status?.nominatedNodeName === node) return true;
  if (pod.spec.nodeSelector?.[HOSTNAME_LABEL] === node) return true;
  const terms =
    pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  const only = (r: { key: string; operator: string; values?: string[] }, key: string): boolean =>
    r.key === key && r.operator === 'In' && r.values?.length === 1 && r.values[0] === node;
  return (
    terms.length > 0 &&
    terms.every(
      (t) =>
        (t.matchExpressions ?? []).some((r) => only(r, HOSTNAME_LABEL)) ||
        (t.matchFields ?? []).some((r) => only(r, 'metadata.name')),
    )
  );
}

const describe = (err: unknown): string => {
  const e = err as { statusCode?: number; code?: number | string; body?: unknown; message?: string };
  const status = e?.statusCode ?? (typeof e?.code === 'number' ? e.code : undefined);
  return `${status ? `HTTP ${status}: ` : ''}${e?.message ?? String(err)}`.slice(0, 300);
};

/**
 * Paces a ListWatch's list function. client-node relists at once whenever a watch ends with 410
 * Gone; an API server (or proxy) that expires every watch would otherwise see a hot relist loop
 * (measured: ~130 lists/s for two informers). Lists closer together than `quietMs` back off
 * exponentially from 250 ms up to `maxBackoffMs`; a quiet period resets the backoff.
 */
export function pacedList<T>(
  list: () => Promise<T>,
  maxBackoffMs: number,
  quietMs = 10_000,
  now: () => number = () => performance.now(),
): () => Promise<T> {
  let last = -Infinity;
  let backoff: Backoff | null = null;
  return async () => {
    const since = now() - last;
    if (since > quietMs) backoff = null;
    else
      backoff ??= new Backoff({
        duration: Math.min(250, maxBackoffMs),
        factor: 2,
        steps: Infinity,
        cap: maxBackoffMs,
      });
    const delay = backoff === null ? 0 : backoff.step();
    // A timer may fire up to a millisecond early by this clock: wait out what is left.
    for (let left = delay - since; left > 0; left = delay - (now() - last)) {
      await new Promise((resolve) => setTimeout(resolve, Math.ceil(left)).unref());
    }
    last = now();
    return list();
  };
}

export class KubeSource {
  private readonly core: CoreV1Api;
  private readonly node: Informer<V1Node>;
  private readonly pods: Informer<V1Pod>;
  private readonly dra: DraInformers | null;
  private stopped = false;
  private scheduled = false;
  private state: SourceState = { status: 'connecting', lastSuccess: null, reason: null };
  private readonly now: () => Date;
  private eventTokens = 25;
  private eventRefill: NodeJS.Timeout | null = null;
  droppedEvents = 0;

  constructor(private readonly options: KubeSourceOptions) {
    this.now = options.now ?? (() => new Date());
    this.core = options.kc.makeApiClient(CoreV1Api);
    const watch = this.stoppableWatch(new Watch(options.kc));
    const nodeSelector = `metadata.name=${options.nodeName}`;
    const podSelector = `spec.nodeName=${options.nodeName}`;
    this.node = this.informer(
      new ListWatch<V1Node>(
        '/api/v1/nodes',
        watch,
        this.paced(() => this.core.listNode({ fieldSelector: nodeSelector })),
        false,
        undefined,
        nodeSelector,
      ),
      'watch nodes',
    );
    this.pods = this.informer(
      new ListWatch<V1Pod>(
        '/api/v1/pods',
        watch,
        this.paced(() => this.core.listPodForAllNamespaces({ fieldSelector: podSelector })),
        false,
        undefined,
        podSelector,
      ),
      'watch pods',
    );
    this.dra = options.request ? this.draInformers(watch, options.request) : null;
  }

  /**
   * An informer's list, paced (pacedList), that fails once the source has stopped. client-node's
   * ListWatch (1.4) goes on to open a watch when a list it started before stop() resolves after it;
   * that watch would never be aborted and would keep a stopped gateway's process alive.
   */
  private paced<T>(list: () => Promise<T>): () => Promise<T> {
    return pacedList(async () => {
      const got = await list();
      if (this.stopped) throw new Error('the Kubernetes source stopped during the list');
      return got;
    }, this.options.maxBackoffMs);
  }

  /** `watch` whose requests are aborted when they are established after stop() (the same race). */
  private stoppableWatch(watch: Watch): Watch {
    const stoppable = Object.create(watch) as Watch;
    stoppable.watch = async (...args: Parameters<Watch['watch']>) => {
      const controller = await watch.watch(...args);
      if (this.stopped) controller.abort();
      return controller;
    };
    return stoppable;
  }

  private draInformers(watch: Watch, request: ApiServerRequest): DraInformers {
    const { nodeName } = this.options;
    const raw = <T extends KubernetesObject>(
      path: string,
      operation: string,
      fieldSelector?: string,
      optional: string | null = null,
    ): Informer<T> => {
      const query = fieldSelector ? `?fieldSelector=${encodeURIComponent(fieldSelector)}` : '';
      const list = async (): Promise<KubernetesListObject<T>> => {
        const res = await request('GET', `${path}${query}`, { timeoutMs: 30_000 });
        if (res.status !== 200) {
          let message = res.body.slice(0, 200);
          try {
            message = (JSON.parse(res.body) as { message?: string }).message ?? message;
          } catch {
            // Not a Status object.
          }
          throw Object.assign(new Error(message), { statusCode: res.status });
        }
        return JSON.parse(res.body) as KubernetesListObject<T>;
      };
      const lw = new ListWatch<T>(path, watch, this.paced(list), false, undefined, fieldSelector);
      return this.informer(lw, operation, optional, true);
    };
    const waitingSelector = 'spec.nodeName=';
    return {
      slices: raw(
        `${RESOURCE_API}/resourceslices`,
        'watch resourceslices',
        `spec.nodeName=${nodeName}`,
        'ResourceSlice',
      ),
      claims: raw(`${RESOURCE_API}/resourceclaims`, 'watch resourceclaims', undefined, 'ResourceClaim'),
      taintRules: raw(
        `${RESOURCE_API}/devicetaintrules`,
        'watch devicetaintrules',
        undefined,
        'DeviceTaintRule',
      ),
      // Which extended resource names a DeviceClass maps to DRA (snapshot.extendedResources).
      deviceClasses: raw(`${RESOURCE_API}/deviceclasses`, 'watch deviceclasses', undefined, 'DeviceClass'),
      waitingPods: this.informer(
        new ListWatch<V1Pod>(
          '/api/v1/pods',
          watch,
          this.paced(() => this.core.listPodForAllNamespaces({ fieldSelector: waitingSelector })),
          false,
          undefined,
          waitingSelector,
        ),
        'watch unscheduled pods',
        null,
        true,
      ),
      input: null,
      waiting: null,
    };
  }

  private informer<T extends KubernetesObject>(
    lw: ListWatch<T>,
    operation: string,
    optional: string | null = null,
    dra = false,
  ): Informer<T> {
    const inf: Informer<T> = {
      lw,
      failures: 0,
      retry: null,
      errors: 0,
      timer: null,
      synced: false,
      optional,
      notServed: null,
    };
    const changed = (): void => {
      inf.synced = true;
      inf.failures = 0;
      if (dra) this.draChanged(inf);
      this.publish();
    };
    lw.on('add', changed);
    lw.on('update', changed);
    lw.on('delete', changed);
    lw.on('connect', () => {
      // A (re)connect follows a successful list or a clean watch end; treat it as healthy.
      if (inf.synced) this.updateState();
    });
    lw.on('error', (err: unknown) => {
      if (this.stopped) return;
      inf.errors++;
      const status = (err as { statusCode?: number }).statusCode;
      if (inf.optional && (status === 404 || status === 403)) {
        // Not served (or not readable by this gateway): that part stays empty; ask again later.
        const reason = `${inf.optional}: ${describe(err)}`;
        if (inf.notServed !== reason) {
          inf.notServed = reason;
          inf.synced = true;
          inf.failures = 0;
          this.draChanged(inf);
          this.publish();
        }
        inf.timer = setTimeout(() => {
          inf.timer = null;
          if (!this.stopped) void this.startInformer(inf);
        }, this.options.maxBackoffMs);
        inf.timer.unref();
        return;
      }
      inf.failures++;
      const message = describe(err);
      this.options.onError?.(operation, message);
      // The Node and its Pods come first: while one of them fails, the reason names it.
      const core = this.node.failures > 0 || this.pods.failures > 0;
      this.setState({
        status: this.state.lastSuccess ? 'stale' : 'connecting',
        lastSuccess: this.state.lastSuccess,
        reason:
          dra && core && this.state.reason
            ? this.state.reason
            : `${operation} failed: ${message}; retrying with backoff`,
      });
      const cap = this.options.maxBackoffMs;
      if (inf.failures === 1 || !inf.retry) {
        inf.retry = new Backoff({ duration: Math.min(500, cap), factor: 2, steps: Infinity, cap });
      }
      const delay = inf.retry.step();
      inf.timer = setTimeout(() => {
        inf.timer = null;
        if (!this.stopped) void this.startInformer(inf);
      }, delay);
      inf.timer.unref();
    });
    return inf;
  }

  private async startInformer<T extends KubernetesObject>(inf: Informer<T>): Promise<void> {
    const errorsBefore = inf.errors;
    try {
      // ListWatch reports a failed list through 'error' and resolves anyway.
      await inf.lw.start();
      if (inf.errors !== errorsBefore || this.stopped) return;
      inf.synced = true;
      inf.failures = 0;
      if (inf.notServed !== null) {
        inf.notServed = null;
        this.draChanged(inf);
      }
      this.publish();
    } catch {
      // ListWatch reports failures through its 'error' callbacks, which schedule the retry.
    }
  }

  start(): void {
    this.stopped = false;
    this.eventRefill = setInterval(() => (this.eventTokens = Math.min(25, this.eventTokens + 10)), 1000);
    this.eventRefill.unref();
    for (const inf of this.informers()) void this.startInformer(inf);
  }

  private informers(): Informer<KubernetesObject>[] {
    const d = this.dra;
    return [
      this.node,
      this.pods,
      ...(d ? [d.slices, d.claims, d.taintRules, d.deviceClasses, d.waitingPods] : []),
    ] as Informer<KubernetesObject>[];
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.eventRefill) clearInterval(this.eventRefill);
    for (const inf of this.informers()) {
      if (inf.timer) clearTimeout(inf.timer);
      await inf.lw.stop();
    }
  }

  /** A DRA informer changed: the model input is rebuilt on the next publish (and only then). */
  private draChanged(inf: Informer<KubernetesObject>): void {
    const d = this.dra;
    if (!d) return;
    if (inf === (d.waitingPods as Informer<KubernetesObject>)) d.waiting = null;
    else d.input = null;
  }

  private draInput(): { dra?: DraKubeInput; waitingPods?: readonly V1Pod[] } {
    const d = this.dra;
    if (!d) return {};
    const notServed: Record<string, string> = {};
    for (const inf of [d.slices, d.claims, d.taintRules, d.deviceClasses]) {
      if (inf.notServed && inf.optional) notServed[inf.optional] = inf.notServed;
    }
    const input = (d.input ??= {
      slices: d.slices.lw.list(),
      claims: d.claims.lw.list(),
      taintRules: d.taintRules.lw.list(),
      ...(d.deviceClasses.synced && !d.deviceClasses.notServed
        ? { deviceClasses: d.deviceClasses.lw.list() }
        : {}),
      notServed,
    });
    const waiting = (d.waiting ??= d.waitingPods.lw
      .list()
      .filter((p) => waitsForNode(p, this.options.nodeName)));
    return { dra: input, waitingPods: waiting };
  }

  private setState(next: SourceState): void {
    if (sameSourceState(next, this.state)) return;
    this.state = next;
    this.options.onState(next);
  }

  private updateState(): void {
    if (this.informers().every((i) => i.synced && i.failures === 0) && this.state.status !== 'ok') {
      this.setState({ status: 'ok', lastSuccess: this.now().toISOString(), reason: null });
    }
  }

  /** Coalesces informer callbacks (a relist fires one per object) into one model update. */
  private publish(): void {
    this.updateState();
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      const node = this.node.lw.list().find((n) => n.metadata?.name === this.options.nodeName) ?? null;
      const pods = this.pods.lw.list().filter((p) => p.spec?.nodeName === this.options.nodeName);
      this.options.onChange({ node, pods, ...this.draInput() });
    });
  }

  /**
   * Posts a Kubernetes Event on this Node. Rate-limited (burst 25, 10/s) so a flapping device cannot
   * flood the API server; failures are reported, never thrown.
   */
  async postNodeEvent(event: { type: 'Normal' | 'Warning'; reason: string; message: string }): Promise<void> {
    if (this.stopped) return;
    if (this.eventTokens <= 0) {
      this.droppedEvents++;
      return;
    }
    this.eventTokens--;
    const now = this.now();
    // Serialising and sending happens on a later turn: the model's patch for the same change
    // (scheduled with setImmediate) reaches stream clients first.
    await new Promise((resolve) => setTimeout(resolve, 0));
    if (this.stopped) return;
    const nodeUid = this.node.lw.list()[0]?.metadata?.uid ?? this.options.nodeName;
    const body: CoreV1Event = {
      metadata: { generateName: `${this.options.nodeName}.`, namespace: 'default' },
      involvedObject: { kind: 'Node', apiVersion: 'v1', name: this.options.nodeName, uid: nodeUid },
      type: event.type,
      reason: event.reason,
      message: event.message.slice(0, 1024),
      source: { component: 'plugboard-gateway', host: this.options.nodeName },
      reportingComponent: 'plugboard-gateway',
      reportingInstance: this.options.nodeName,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    };
    try {
      await this.core.createNamespacedEvent({ namespace: 'default', body });
    } catch (err) {
      this.options.onError?.('post event', describe(err));
    }
  }
}
