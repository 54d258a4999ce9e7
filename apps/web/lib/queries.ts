// One queryOptions factory per data kind; the live streams write into the same keys with
// setQueryData, so every view reads one cache whether data came from REST or the stream.
import { queryOptions, type QueryClient } from '@tanstack/react-query';
import type { NodeHistory, NodeSnapshot } from '@plugboard/api';
import type { ClusterDocument } from './cluster-types';
import type { LiveDocument } from './live-document';
import { apiFetch, nodeApiPath } from './api';
import { markOnce } from './perf-marks';
import { fromResponse, type HistoryView } from './history';

export const queryKeys = {
  cluster: ['cluster'] as const,
  config: ['config'] as const,
  node: (name: string) => ['node', name] as const,
  /** Every history window of a node (live messages update all of them). */
  historyAll: (name: string) => ['node', name, 'history'] as const,
  history: (name: string, windowMs: number) => ['node', name, 'history', windowMs] as const,
};

export interface DashboardConfig {
  faultsEnabled: boolean;
  discovery: { mode: 'static' | 'kubernetes'; source: string; error: string | null };
}

export const configQuery = () =>
  queryOptions({
    queryKey: queryKeys.config,
    queryFn: () => apiFetch<DashboardConfig>('/api/config'),
    staleTime: Infinity,
  });

export const clusterQuery = () =>
  queryOptions({
    queryKey: queryKeys.cluster,
    queryFn: async (): Promise<LiveDocument<ClusterDocument>> => {
      const r = await apiFetch<{ seq: number; cluster: ClusterDocument }>('/api/cluster');
      return { seq: r.seq, data: r.cluster, receivedAt: Date.now() };
    },
    // The stream keeps it current; REST is only the bootstrap.
    staleTime: Infinity,
    refetchOnWindowFocus: false,
    refetchOnReconnect: false,
  });

/**
 * The node snapshot. REST bootstraps it (and reports why when the gateway is unreachable); the
 * stream then owns it. A REST answer never overwrites data the stream already delivered: the
 * stream's copy has a seq the patches build on.
 */
export const nodeQuery = (client: QueryClient, name: string) =>
  queryOptions({
    queryKey: queryKeys.node(name),
    queryFn: async (): Promise<LiveDocument<NodeSnapshot>> => {
      const node = await apiFetch<NodeSnapshot>(nodeApiPath(name, 'node'));
      markOnce('plugboard:node-data');
      const cached = client.getQueryData<LiveDocument<NodeSnapshot>>(queryKeys.node(name));
      if (cached?.seq != null) return cached;
      return { seq: null, data: node, receivedAt: Date.now() };
    },
    staleTime: Infinity,
    refetchOnWindowFocus: false,
    refetchOnReconnect: false,
    retry: 1,
  });

/**
 * A node's history over a window. REST fills it; on the node page the stream's `history`
 * messages extend it (lib/history.ts appendHistory). Without a stream (the overview's sparklines)
 * it is refreshed at `refetchMs`: the cluster view holds no per-node streams by design.
 */
export const historyQuery = (
  name: string,
  window: { ms: number; since: string },
  options: { resource?: string; refetchMs?: number } = {},
) =>
  queryOptions({
    queryKey: options.resource
      ? ([...queryKeys.history(name, window.ms), options.resource] as const)
      : queryKeys.history(name, window.ms),
    queryFn: async (): Promise<HistoryView> => {
      const q = new URLSearchParams({ since: window.since });
      if (options.resource) q.set('resource', options.resource);
      const h = await apiFetch<NodeHistory>(nodeApiPath(name, `history?${q}`));
      return fromResponse(h, window.ms);
    },
    staleTime: options.refetchMs ?? Infinity,
    refetchInterval: options.refetchMs ?? false,
    refetchOnWindowFocus: false,
    retry: 1,
  });
