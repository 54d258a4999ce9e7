// The kubelet's own settings, read the way that works on any node: `GET /configz` through the API
// server's node proxy (`/api/v1/nodes/{node}/proxy/configz`, RBAC `get` on `nodes/proxy`), which
// answers `{"kubeletconfig": {…KubeletConfiguration v1beta1…}}`. From it the gateway learns the
// Topology Manager policy and scope, the CPU and Memory Manager policies and reservedSystemCPUs —
// what the NUMA views show and what "try to place" predicts with. kubelet-sim serves the same path.
// The settings only change when the kubelet restarts, so this polls slowly (and again soon after a
// failure, with backoff).
import type { Logger } from 'pino';
import { Backoff } from '@plugboard/apimachinery';
import type { KubeletSettings } from '../model/topology.js';
import type { ApiServerRequest } from './api-server-request.js';
import { PollLoop } from './poll-loop.js';
import { parseKernelCpuList } from './sysfs-topology.js';

export type KubeletSettingsListener = (settings: KubeletSettings | null, reason: string | null) => void;

export interface KubeletConfigzOptions {
  nodeName: string;
  request: ApiServerRequest;
  intervalMs: number;
  timeoutMs: number;
  maxBackoffMs: number;
  onState: KubeletSettingsListener;
  logger: Logger;
}

/** Why the settings are unknown while the first answer is out. */
export const CONFIGZ_CHECKING = "reading the kubelet's configz through the API server";

/** The path of a node's configz behind the API server's node proxy. */
export const configzPath = (node: string) => `/api/v1/nodes/${encodeURIComponent(node)}/proxy/configz`;

/**
 * The settings in a configz document; a reason when it is not one. Fields the kubelet leaves out
 * take the kubelet's defaults (none / container / none / None).
 */
export function parseConfigz(text: string): { settings: KubeletSettings } | { reason: string } {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return { reason: 'the answer is not JSON' };
  }
  const c = (doc as { kubeletconfig?: unknown } | null)?.kubeletconfig;
  if (!c || typeof c !== 'object') return { reason: 'the answer has no "kubeletconfig" object' };
  const k = c as Record<string, unknown>;
  const str = (key: string, def: string): string | null =>
    k[key] === undefined ? def : typeof k[key] === 'string' ? k[key] : null;
  const settings = {
    topologyManagerPolicy: str('topologyManagerPolicy', 'none'),
    topologyManagerScope: str('topologyManagerScope', 'container'),
    cpuManagerPolicy: str('cpuManagerPolicy', 'none'),
    memoryManagerPolicy: str('memoryManagerPolicy', 'None'),
  };
  for (const [key, value] of Object.entries(settings))
    if (value === null) return { reason: `kubeletconfig.${key} is not a string` };
  const reserved = str('reservedSystemCPUs', '');
  const reservedCpuIds = reserved === null ? null : parseKernelCpuList(reserved);
  if (reservedCpuIds === null) return { reason: 'kubeletconfig.reservedSystemCPUs is not a CPU list' };
  return {
    settings: { source: 'configz', ...(settings as Record<keyof typeof settings, string>), reservedCpuIds },
  };
}

export class KubeletConfigz {
  private readonly loop = new PollLoop(() => this.poll());
  /** The retry backoff while configz cannot be read (1 s doubling up to maxBackoffMs); null: read. */
  private retry: Backoff | null = null;
  private last: string | null = null;
  private reason: string | null = null;

  constructor(private readonly o: KubeletConfigzOptions) {}

  start(): void {
    this.loop.start();
  }

  stop(): void {
    this.loop.stop();
  }

  /** Read again shortly (the kubelet restarted: its settings may have changed). */
  pollSoon(delayMs = 100): void {
    this.loop.pollSoon(delayMs);
  }

  /** One read; answers the delay before the next. */
  private async poll(): Promise<number> {
    const path = configzPath(this.o.nodeName);
    try {
      const res = await this.o.request('GET', path, { timeoutMs: this.o.timeoutMs });
      if (res.status === 200) {
        const parsed = parseConfigz(res.body);
        if ('settings' in parsed) this.accept(parsed.settings);
        else this.unavailable(`GET ${path}: ${parsed.reason}`);
      } else {
        this.unavailable(describeStatus(res.status, path, this.o.nodeName));
      }
    } catch (err) {
      this.unavailable(`GET ${path} failed: ${(err as Error).message}`);
    }
    return this.retry === null ? this.o.intervalMs : this.retry.step();
  }

  private accept(settings: KubeletSettings): void {
    this.retry = null;
    const text = JSON.stringify(settings);
    if (text === this.last) return;
    if (this.last === null)
      this.o.logger.info({ ...settings }, "kubelet settings read from the kubelet's configz");
    else this.o.logger.info({ ...settings }, 'kubelet settings changed');
    this.last = text;
    this.reason = null;
    this.o.onState(settings, null);
  }

  private unavailable(reason: string): void {
    const cap = this.o.maxBackoffMs;
    this.retry ??= new Backoff({ duration: Math.min(1000, cap), factor: 2, steps: Infinity, cap });
    if (this.last === null && this.reason === reason) return;
    this.o.logger.warn({ reason }, 'kubelet configz unavailable: kubelet settings unknown');
    this.last = null;
    this.reason = reason;
    this.o.onState(null, reason);
  }
}

function describeStatus(status: number, path: string, node: string): string {
  if (status === 401 || status === 403)
    return `the API server refused GET ${path} (HTTP ${status}): the gateway's service account needs get on nodes/proxy (chart value gateway.rbac.nodesProxy)`;
  if (status === 404) return `GET ${path} answered 404: no node "${node}", or its kubelet serves no configz`;
  return `GET ${path} answered HTTP ${status}`;
}
