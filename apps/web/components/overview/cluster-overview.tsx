'use client';
// Cluster overview: every node with per-resource numbers (device-plugin resources and DRA
// drivers), live from the web server's aggregated summary stream (one socket for the whole
// cluster), with sort and filter; the cluster's DRA totals and pending claims.
import { useDeferredValue, useEffect, useMemo, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import type { ResourceCounts } from '@plugboard/api';
import type { ClusterDocument, ClusterNode } from '../../lib/cluster-types';
import { ResourceSummary } from '../resource-summary';
import { clusterQuery, queryKeys } from '../../lib/queries';
import { useLiveQuery } from '../../lib/use-live-query';
import { markAfterPaint, markOnce } from '../../lib/perf-marks';
import { LiveIndicator } from '../live-indicator';
import { ProblemNotice } from '../problem-notice';
import { NodeCard } from './node-card';
import { resourcesServed, servedWords } from './served-counts';
import { clusterDraTotals, DraClusterPanel, draUnhealthy } from './dra-overview';

export type SortKey = 'name' | 'unhealthy' | 'free' | 'allocated';
export type HealthFilter = 'all' | 'unhealthy' | 'unreachable';

/** Device-plugin resources and DRA drivers of a node, filtered by name ('' = all). */
function countsOf(n: ClusterNode, resource: string): { free: number; allocated: number }[] {
  if (!n.summary) return [];
  return [...Object.entries(n.summary.resources), ...Object.entries(n.summary.dra?.drivers ?? {})]
    .filter(([name]) => !resource || name === resource)
    .map(([, c]) => c);
}

function freeOf(n: ClusterNode, resource: string): number {
  if (!n.summary) return -1;
  return countsOf(n, resource).reduce((sum, r) => sum + r.free, 0);
}

function allocatedOf(n: ClusterNode, resource: string): number {
  if (!n.summary) return -1;
  return countsOf(n, resource).reduce((sum, r) => sum + r.allocated, 0);
}

/** Unhealthy devices of both APIs (the summary's unhealthyDevices counts device plugins only). */
function unhealthyOf(n: ClusterNode): number {
  return n.summary ? n.summary.unhealthyDevices + draUnhealthy(n.summary.dra) : -1;
}

/** Per-resource sums over the nodes that have data (stale nodes count with their last summary). */
export function clusterTotals(doc: ClusterDocument): Record<string, ResourceCounts> {
  const totals: Record<string, ResourceCounts> = {};
  for (const n of Object.values(doc.nodes)) {
    for (const [name, r] of Object.entries(n.summary?.resources ?? {})) {
      const t = (totals[name] ??= {
        capacity: 0,
        allocatable: 0,
        allocated: 0,
        free: 0,
        healthy: 0,
        unhealthy: 0,
      });
      t.capacity += r.capacity;
      t.allocatable += r.allocatable;
      t.allocated += r.allocated;
      t.free += r.free;
      t.healthy += r.healthy;
      t.unhealthy += r.unhealthy;
    }
  }
  return totals;
}

/** Filter + sort, pure so it is tested directly. */
export function selectNodes(
  doc: ClusterDocument,
  opts: { text: string; resource: string; health: HealthFilter; sort: SortKey },
): ClusterNode[] {
  const text = opts.text.trim().toLowerCase();
  const nodes = Object.values(doc.nodes).filter((n) => {
    if (text && !n.name.toLowerCase().includes(text)) return false;
    if (
      opts.resource &&
      n.summary &&
      !(opts.resource in n.summary.resources) &&
      !(opts.resource in (n.summary.dra?.drivers ?? {}))
    )
      return false;
    if (opts.health === 'unhealthy' && !(unhealthyOf(n) > 0)) return false;
    if (opts.health === 'unreachable' && n.status === 'live') return false;
    return true;
  });
  const byName = (a: ClusterNode, b: ClusterNode) => a.name.localeCompare(b.name);
  switch (opts.sort) {
    case 'name':
      return nodes.sort(byName);
    case 'unhealthy':
      return nodes.sort((a, b) => unhealthyOf(b) - unhealthyOf(a) || byName(a, b));
    case 'free':
      return nodes.sort((a, b) => freeOf(b, opts.resource) - freeOf(a, opts.resource) || byName(a, b));
    case 'allocated':
      return nodes.sort(
        (a, b) => allocatedOf(b, opts.resource) - allocatedOf(a, opts.resource) || byName(a, b),
      );
  }
}

export function ClusterOverview() {
  const query = useQuery(clusterQuery());
  const status = useLiveQuery<ClusterDocument>(queryKeys.cluster, '/api/cluster/stream');
  const [text, setText] = useState('');
  const [resource, setResource] = useState('');
  const [health, setHealth] = useState<HealthFilter>('all');
  const [sort, setSort] = useState<SortKey>('name');
  const deferredText = useDeferredValue(text);
  const doc = query.data?.data;
  if (doc) markOnce('plugboard:cluster-data');

  const resourceNames = useMemo(() => {
    const names = new Set<string>();
    const drivers = new Set<string>();
    for (const n of Object.values(doc?.nodes ?? {})) {
      for (const r of Object.keys(n.summary?.resources ?? {})) names.add(r);
      for (const d of Object.keys(n.summary?.dra?.drivers ?? {})) drivers.add(d);
    }
    return [
      ...[...names].sort().map((name) => ({ name, label: name })),
      ...[...drivers].sort().map((name) => ({ name, label: `${name} (DRA)` })),
    ];
  }, [doc]);
  const nodes = useMemo(
    () => (doc ? selectNodes(doc, { text: deferredText, resource, health, sort }) : []),
    [doc, deferredText, resource, health, sort],
  );
  const totals = useMemo(() => (doc ? clusterTotals(doc) : {}), [doc]);
  const served = useMemo(
    () => resourcesServed(Object.values(doc?.nodes ?? {}).flatMap((n) => (n.summary ? [n.summary] : []))),
    [doc],
  );
  const draTotals = useMemo(() => (doc ? clusterDraTotals(doc) : null), [doc]);
  const total = doc ? Object.keys(doc.nodes).length : 0;
  useEffect(() => {
    if (total > 0) markAfterPaint('plugboard:overview-rendered');
  }, [total]);
  const unhealthyNodes = doc ? Object.values(doc.nodes).filter((n) => unhealthyOf(n) > 0).length : 0;
  const unreachable = doc ? Object.values(doc.nodes).filter((n) => n.status !== 'live').length : 0;

  return (
    <>
      <div className="row">
        <h1>Cluster overview</h1>
        <span className="spacer" />
        <LiveIndicator status={status} dataAt={query.data?.receivedAt ?? null} />
      </div>
      {query.isError && !doc && <ProblemNotice title="Cannot load the cluster" error={query.error} />}
      {query.isPending && <p role="status">Loading nodes…</p>}
      {doc && (
        <>
          <p className="muted">
            {total} nodes · {unhealthyNodes} with unhealthy devices · {unreachable} not live · gateways from{' '}
            {doc.discovery.source}
          </p>
          {served.here.resources + served.observed.resources > 0 && (
            <p className="muted served-counts">Across nodes: {servedWords(served)}</p>
          )}
          {doc.discovery.error && (
            <ProblemNotice title="Gateway discovery is failing">
              <p>{doc.discovery.error}</p>
            </ProblemNotice>
          )}
          {total === 0 && (
            <div className="notice info empty" role="status">
              <p>
                <strong>No gateways known.</strong>
              </p>
              <p>
                {doc.discovery.mode === 'static'
                  ? `The list from ${doc.discovery.source} is empty: set PLUGBOARD_GATEWAYS="node=http://host:port,…" or PLUGBOARD_GATEWAYS_FILE.`
                  : `No running gateway pods match: ${doc.discovery.source}.`}
              </p>
            </div>
          )}
          {Object.keys(totals).length > 0 && (
            <details className="card" style={{ margin: '0.5rem 0' }}>
              <summary>Cluster totals per resource</summary>
              <div className="grid" style={{ marginTop: '0.5rem' }}>
                {Object.entries(totals)
                  .sort(([a], [b]) => a.localeCompare(b))
                  .map(([name, counts]) => (
                    <ResourceSummary key={name} name={name} counts={counts} />
                  ))}
              </div>
            </details>
          )}
          {draTotals && <DraClusterPanel totals={draTotals} />}
          {total > 0 && (
            <form
              className="row card"
              role="search"
              aria-label="Filter nodes"
              onSubmit={(e) => e.preventDefault()}
              style={{ margin: '0.5rem 0 1rem' }}
            >
              <label>
                Node
                <input
                  type="search"
                  value={text}
                  onChange={(e) => setText(e.target.value)}
                  placeholder="name contains…"
                />
              </label>
              <label>
                Resource
                <select value={resource} onChange={(e) => setResource(e.target.value)}>
                  <option value="">All resources</option>
                  {resourceNames.map((r) => (
                    <option key={r.name} value={r.name}>
                      {r.label}
                    </option>
                  ))}
                </select>
              </label>
              <label>
                Health
                <select value={health} onChange={(e) => setHealth(e.target.value as HealthFilter)}>
                  <option value="all">All nodes</option>
                  <option value="unhealthy">With unhealthy devices</option>
                  <option value="unreachable">Not live</option>
                </select>
              </label>
              <label>
                Sort by
                <select value={sort} onChange={(e) => setSort(e.target.value as SortKey)}>
                  <option value="name">Name</option>
                  <option value="unhealthy">Unhealthy devices</option>
                  <option value="free">Free devices</option>
                  <option value="allocated">Allocated devices</option>
                </select>
              </label>
              <span className="muted" role="status">
                {nodes.length} of {total} shown
              </span>
            </form>
          )}
          {total > 0 && nodes.length === 0 && <p className="notice info">No node matches these filters.</p>}
          <div className="grid">
            {nodes.map((n) => (
              <NodeCard key={n.name} node={n} resourceFilter={resource} showHistory />
            ))}
          </div>
        </>
      )}
    </>
  );
}
