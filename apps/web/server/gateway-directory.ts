// Which gateways exist: a static list (demo, config file) or gateway pods discovered through the
// Kubernetes API by label selector (in cluster). The node name is the key the browser uses.
// @kubernetes/client-node is loaded lazily and only here, so it never reaches a page bundle.
import type { Logger } from 'pino';
import { Backoff } from '@plugboard/apimachinery';
import type { DiscoveryConfig, GatewayEntry } from './config';
import { causeText } from './errors';

export interface DirectoryStatus {
  mode: 'static' | 'kubernetes';
  /** What the list comes from, for empty states ("PLUGBOARD_GATEWAYS", "pods app=gw in plugboard"). */
  source: string;
  /** Why discovery is currently failing, or null. */
  error: string | null;
}

export interface GatewayDirectory {
  list(): readonly GatewayEntry[];
  get(name: string): GatewayEntry | undefined;
  status(): DirectoryStatus;
  /** Called whenever the list or status changes. */
  subscribe(listener: () => void): () => void;
  stop(): Promise<void>;
}

class ListenerSet {
  private readonly listeners = new Set<() => void>();
  add(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
  emit(): void {
    for (const fn of this.listeners) fn();
  }
}

export function staticDirectory(source: string, gateways: readonly GatewayEntry[]): GatewayDirectory {
  const byName = new Map(gateways.map((g) => [g.name, g]));
  return {
    list: () => gateways,
    get: (name) => byName.get(name),
    status: () => ({ mode: 'static', source, error: null }),
    subscribe: () => () => {},
    stop: async () => {},
  };
}

interface PodLike {
  metadata?: { name?: string; namespace?: string; uid?: string };
  spec?: { nodeName?: string };
  status?: { podIP?: string; phase?: string };
}

function entryFor(pod: PodLike, scheme: string, port: number): GatewayEntry | null {
  const node = pod.spec?.nodeName;
  const ip = pod.status?.podIP;
  if (!node || !ip || pod.status?.phase !== 'Running') return null;
  const host = ip.includes(':') ? `[${ip}]` : ip;
  return { name: node, url: `${scheme}://${host}:${port}` };
}

/** Gateway pods by label selector, kept current with an informer (list + watch, relist on 410). */
export async function kubernetesDirectory(
  cfg: Extract<DiscoveryConfig, { mode: 'kubernetes' }>,
  logger: Logger,
): Promise<GatewayDirectory> {
  const k8s = await import('@kubernetes/client-node');
  const kc = new k8s.KubeConfig();
  kc.loadFromDefault();
  const api = kc.makeApiClient(k8s.CoreV1Api);
  const source = `pods matching "${cfg.selector}" in namespace ${cfg.namespace}`;
  const listeners = new ListenerSet();
  const pods = new Map<string, PodLike>();
  let entries: GatewayEntry[] = [];
  let error: string | null = null;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  // 1 s doubling up to 30 s; a pod seen again starts over.
  const retryBackoff = (): Backoff =>
    new Backoff({ duration: 1000, factor: 2, steps: Infinity, cap: 30_000 });
  let backoff = retryBackoff();

  const rebuild = () => {
    const byNode = new Map<string, GatewayEntry>();
    for (const pod of pods.values()) {
      const e = entryFor(pod, cfg.scheme, cfg.port);
      if (e) byNode.set(e.name, e);
    }
    entries = [...byNode.values()].sort((a, b) => a.name.localeCompare(b.name));
    listeners.emit();
  };
  const keyOf = (p: PodLike) => p.metadata?.uid ?? `${p.metadata?.namespace}/${p.metadata?.name}`;

  const informer = k8s.makeInformer(
    kc,
    `/api/v1/namespaces/${encodeURIComponent(cfg.namespace)}/pods`,
    () => api.listNamespacedPod({ namespace: cfg.namespace, labelSelector: cfg.selector }),
    cfg.selector,
  );
  const upsert = (p: PodLike) => {
    pods.set(keyOf(p), p);
    if (error !== null) error = null;
    backoff = retryBackoff();
    rebuild();
  };
  informer.on('add', upsert);
  informer.on('update', upsert);
  informer.on('delete', (p: PodLike) => {
    pods.delete(keyOf(p));
    rebuild();
  });
  informer.on('error', (err: unknown) => {
    error = causeText(err);
    const retryMs = backoff.step();
    logger.warn({ component: 'discovery', err: error, retryMs }, 'gateway discovery failed; retrying');
    listeners.emit();
    if (stopped) return;
    clearTimeout(retry);
    retry = setTimeout(() => {
      informer.start().catch(() => {});
    }, retryMs);
  });
  informer.start().catch((err: unknown) => {
    error = causeText(err);
    listeners.emit();
  });
  logger.info(
    { component: 'discovery', selector: cfg.selector, namespace: cfg.namespace },
    'discovering gateways',
  );

  return {
    list: () => entries,
    get: (name) => entries.find((e) => e.name === name),
    status: () => ({ mode: 'kubernetes', source, error }),
    subscribe: (fn) => listeners.add(fn),
    stop: async () => {
      stopped = true;
      clearTimeout(retry);
      await informer.stop();
    },
  };
}
