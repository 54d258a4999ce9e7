// PodResources v1 poller. The API has no watch, so the gateway polls `List` and
// `GetAllocatableResources` on an interval (and soon after every Allocate), and only reports answers
// that differ from the previous ones. A missing socket or a kubelet restart keeps the last answer,
// marked stale, and retries with exponential backoff.
//
// One gRPC channel serves the poller's whole life. It dials the path on every (re)connect, so a
// restarted kubelet's new socket inode is found without a new channel. Closing the channel after a
// failure and opening another (as this poller once did) leaves connections behind across kubelet
// restarts with @grpc/grpc-js 1.14: a subchannel whose last reference goes while it is in
// TRANSIENT_FAILURE keeps its backoff timer, reconnects when it fires and holds that connection,
// owned by nobody, until the kubelet closes it.
import { stat } from 'node:fs/promises';
import { Metadata, credentials, status as grpcStatus, type ServiceError } from '@grpc/grpc-js';
import { Backoff } from '@plugboard/apimachinery';
import { podresources } from '@plugboard/proto';
import type { PodResourcesInput } from '../model/build.js';
import type { SourceState } from '@plugboard/api';
import { sameSourceState } from '../model/source-state.js';
import { sameItems } from '../same-items.js';

export interface PodResourcesPollerOptions {
  socket: string;
  intervalMs: number;
  timeoutMs: number;
  maxBackoffMs: number;
  onData: (data: PodResourcesInput) => void;
  onState: (state: SourceState) => void;
  onError?: (method: string, code: string, message: string) => void;
  onPoll?: (seconds: number) => void;
  now?: () => Date;
}

type Client = InstanceType<typeof podresources.PodResourcesListerClient>;

function call<Req, Res>(
  client: Client,
  method: 'list' | 'getAllocatableResources',
  req: Req,
  timeoutMs: number,
): Promise<Res> {
  return new Promise((resolve, reject) => {
    const fn = client[method].bind(client) as unknown as (
      r: Req,
      meta: Metadata,
      opts: { deadline: number },
      cb: (err: ServiceError | null, res: Res) => void,
    ) => void;
    fn(req, new Metadata(), { deadline: Date.now() + timeoutMs }, (err, res) =>
      err ? reject(err) : resolve(res),
    );
  });
}

export class PodResourcesPoller {
  private client: Client | null = null;
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<void> | null = null;
  private again = false;
  private stopped = true;
  /** The retry backoff while polls fail (2 × intervalMs doubling up to maxBackoffMs); null: polling. */
  private retry: Backoff | null = null;
  private hasData = false;
  /** Last answer's parts by JSON, so unchanged pods (and allocatable) keep their object identity. */
  private lastParts = new Map<string, unknown>();
  private lastPods: podresources.PodResources[] = [];
  private state: SourceState = { status: 'connecting', lastSuccess: null, reason: null };
  private readonly now: () => Date;

  constructor(private readonly options: PodResourcesPollerOptions) {
    this.now = options.now ?? (() => new Date());
  }

  start(): void {
    this.stopped = false;
    // The channel's own reconnect backoff follows the poller's, so a returning kubelet is seen
    // within maxBackoffMs (grpc-js defaults to 1 s growing to 120 s).
    this.client ??= new podresources.PodResourcesListerClient(
      `unix://${this.options.socket}`,
      credentials.createInsecure(),
      {
        'grpc.max_receive_message_length': 64 << 20,
        'grpc.initial_reconnect_backoff_ms': Math.min(this.options.intervalMs, this.options.maxBackoffMs),
        'grpc.max_reconnect_backoff_ms': this.options.maxBackoffMs,
      },
    );
    this.setState({ status: 'connecting', lastSuccess: null, reason: `dialling ${this.options.socket}` });
    void this.pollNow();
  }

  /** Polls as soon as possible; a request during a poll makes one more poll right after it. */
  pollNow(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.inFlight) {
      this.again = true;
      return this.inFlight;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.inFlight = this.poll().finally(() => {
      this.inFlight = null;
      if (this.stopped) return;
      if (this.again) {
        this.again = false;
        void this.pollNow();
        return;
      }
      const delay = this.retry === null ? this.options.intervalMs : this.retry.step();
      this.timer = setTimeout(() => void this.pollNow(), delay);
      this.timer.unref();
    });
    return this.inFlight;
  }

  /**
   * Resolves once a poll that started after this call has finished: an answer no older than the
   * call (pollNow may hand back a poll that was already out).
   */
  async pollFresh(): Promise<void> {
    if (this.inFlight) await this.inFlight;
    await this.pollNow();
  }

  /** Polls after the kubelet has had a moment to record an allocation (Allocate runs before the pod is recorded). */
  pollSoon(delayMs = 20): void {
    if (this.stopped) return;
    setTimeout(() => void this.pollNow(), delayMs).unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.inFlight?.catch(() => undefined);
    this.closeClient();
  }

  private closeClient(): void {
    this.client?.close();
    this.client = null;
  }

  private setState(next: SourceState): void {
    if (sameSourceState(next, this.state)) return;
    this.state = next;
    this.options.onState(next);
  }

  /**
   * Reuses the previous answer's objects for every part whose JSON is unchanged, so the model's
   * caches see the same objects and rebuild only what changed. `changed` is false when nothing did.
   */
  private stabilize(
    pods: podresources.PodResources[],
    allocatable: podresources.AllocatableResourcesResponse,
  ): { data: PodResourcesInput; changed: boolean } {
    const parts = new Map<string, unknown>();
    const reuse = <T>(value: T): T => {
      const json = JSON.stringify(value);
      const prev = this.lastParts.get(json) as T | undefined;
      parts.set(json, prev ?? value);
      return prev ?? value;
    };
    const nextPods = pods.map(reuse);
    const samePods = sameItems(nextPods, this.lastPods);
    const allocatableJson = `allocatable:${JSON.stringify(allocatable)}`;
    const prevAllocatable = this.lastParts.get(allocatableJson) as
      podresources.AllocatableResourcesResponse | undefined;
    parts.set(allocatableJson, prevAllocatable ?? allocatable);
    const changed = !samePods || prevAllocatable === undefined || !this.hasData;
    this.lastParts = parts;
    if (!samePods) this.lastPods = nextPods;
    this.hasData = true;
    return { data: { pods: this.lastPods, allocatable: prevAllocatable ?? allocatable }, changed };
  }

  private async poll(): Promise<void> {
    const started = process.hrtime.bigint();
    let method = 'stat';
    try {
      try {
        const s = await stat(this.options.socket);
        if (!s.isSocket()) throw new Error(`${this.options.socket} is not a socket`);
      } catch (err) {
        const e = err as NodeJS.ErrnoException;
        throw Object.assign(
          new Error(e.code === 'ENOENT' ? `socket ${this.options.socket} does not exist` : e.message),
          {
            grpcCode: e.code ?? 'ERROR',
          },
        );
      }
      const client = this.client;
      if (client === null) return; // stopped
      method = 'List';
      const list = await call<podresources.ListPodResourcesRequest, podresources.ListPodResourcesResponse>(
        client,
        'list',
        {},
        this.options.timeoutMs,
      );
      method = 'GetAllocatableResources';
      const allocatable = await call<
        podresources.AllocatableResourcesRequest,
        podresources.AllocatableResourcesResponse
      >(client, 'getAllocatableResources', {}, this.options.timeoutMs);
      this.options.onPoll?.(Number(process.hrtime.bigint() - started) / 1e9);
      this.retry = null;
      const { data, changed } = this.stabilize(list.podResources, allocatable);
      if (changed) this.options.onData(data);
      if (changed || this.state.status !== 'ok') {
        this.setState({ status: 'ok', lastSuccess: this.now().toISOString(), reason: null });
      }
    } catch (err) {
      const cap = this.options.maxBackoffMs;
      this.retry ??= new Backoff({
        duration: Math.min(2 * this.options.intervalMs, cap),
        factor: 2,
        steps: Infinity,
        cap,
      });
      const e = err as ServiceError & { grpcCode?: string };
      const code =
        e.grpcCode ?? (typeof e.code === 'number' ? (grpcStatus[e.code] ?? String(e.code)) : 'UNKNOWN');
      this.options.onError?.(method, code, e.details || e.message);
      const why = `${method} failed (${code}): ${e.details || e.message}; retrying with backoff`;
      this.setState({
        status: this.hasData ? 'stale' : 'connecting',
        lastSuccess: this.state.lastSuccess,
        reason: why,
      });
    }
  }
}
