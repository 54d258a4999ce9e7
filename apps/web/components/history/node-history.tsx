'use client';
// History on the node page and in the device drawers: device-plugin resources and DRA drivers, each
// device's health strip. REST fills the chosen window; the node stream's `history` messages (opted
// in with ?history=true) extend every cached window of the node, and a gap (reconnect, lost
// message) refetches. Charts end at the live snapshot's counts.
import { useCallback, useEffect, useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { DraHealthTransition, HealthTransition, HistoryMessage, NodeSnapshot } from '@plugboard/api';
import { appendHistory, HISTORY_WINDOWS, type HistoryView } from '../../lib/history';
import { historyQuery, queryKeys } from '../../lib/queries';
import { servedByOf } from '../../lib/node-view';
import type { ExtraMessage } from '../../lib/use-live-query';
import { DraDriverHistory } from './dra-driver-history';
import { HealthStrip } from './health-strip';
import { ResourceHistory } from './resource-history';

/** The stream handler for `history` messages: pass it to useLiveQuery. */
export function useHistoryFeed(name: string): (msg: ExtraMessage) => void {
  const client = useQueryClient();
  return useCallback(
    (msg: ExtraMessage) => {
      if (msg.type !== 'history') return;
      const m = msg as unknown as HistoryMessage;
      let gap = false;
      client.setQueriesData<HistoryView>({ queryKey: queryKeys.historyAll(name) }, (view) => {
        if (!view) return view;
        const r = appendHistory(view, m, Date.now());
        gap ||= r.gap;
        return r.view;
      });
      if (gap) void client.invalidateQueries({ queryKey: queryKeys.historyAll(name) });
    },
    [client, name],
  );
}

/** Wall clock for the charts' right edge, advanced every `ms`. */
function useNow(ms: number): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(t);
  }, [ms]);
  return now;
}

export function NodeHistoryPanel({ node }: { node: NodeSnapshot }) {
  const [windowIndex, setWindowIndex] = useState(1);
  const win = HISTORY_WINDOWS[windowIndex] ?? HISTORY_WINDOWS[1];
  const q = useQuery(historyQuery(node.nodeName, win));
  const now = useNow(10_000);
  const resources = Object.values(node.resources).sort((a, b) => a.name.localeCompare(b.name));
  const draDrivers = Object.values(node.dra?.drivers ?? {}).sort((a, b) => a.name.localeCompare(b.name));
  return (
    <div>
      <p className="row">
        <label>
          Window{' '}
          <select value={windowIndex} onChange={(e) => setWindowIndex(Number(e.target.value))}>
            {HISTORY_WINDOWS.map((w, i) => (
              <option key={w.since} value={i}>
                {w.label}
              </option>
            ))}
          </select>
        </label>
        <span className="muted">kept in the gateway&apos;s memory; lost when it restarts</span>
      </p>
      {q.isError && (
        <p className="notice warn">History unavailable: {q.error instanceof Error ? q.error.message : ''}</p>
      )}
      {q.isPending && <p className="muted">Loading history…</p>}
      {q.data && (
        <div className="history-grid">
          {resources.map((r) => (
            <ResourceHistory
              key={r.name}
              resource={r.name}
              points={q.data.resources[r.name] ?? []}
              live={r.kubelet}
              servedBy={servedByOf(r)}
              windowLabel={win.label}
              now={now}
            />
          ))}
          {q.data.draRecorded &&
            draDrivers.map((d) => (
              <DraDriverHistory
                key={`dra:${d.name}`}
                driver={d.name}
                points={q.data.draDrivers[d.name] ?? []}
                live={d.counts}
                windowLabel={win.label}
                now={now}
              />
            ))}
        </div>
      )}
      {q.data && !q.data.draRecorded && draDrivers.length > 0 && (
        <p className="muted">
          This gateway&apos;s history does not record DRA drivers (it predates DRA history).
        </p>
      )}
    </div>
  );
}

/**
 * Health strips of a tile's devices (replicas included) over the last hour, for the drawers: a
 * device plugin's devices, or a DRA device (`api: 'dra'`; its strip also shows its taints).
 */
export function DeviceHealthHistory({
  nodeName,
  deviceKeys,
  api = 'device-plugin',
}: {
  nodeName: string;
  deviceKeys: string[];
  api?: 'device-plugin' | 'dra';
}) {
  const win = HISTORY_WINDOWS[1];
  const q = useQuery(historyQuery(nodeName, win));
  const now = useNow(10_000);
  if (q.isError) return <p className="muted">History unavailable.</p>;
  if (!q.data) return <p className="muted">Loading history…</p>;
  if (api === 'dra' && !q.data.draRecorded) {
    return (
      <p className="muted">
        This gateway&apos;s history does not record DRA devices (it predates DRA history): see the
        device&apos;s events below.
      </p>
    );
  }
  const history: Record<string, readonly (HealthTransition | DraHealthTransition)[]> =
    api === 'dra' ? q.data.draDevices : q.data.devices;
  // A young gateway knows less than the window: start the strips where its history starts, so a
  // fault a minute ago is not a sliver at the right edge of an empty hour.
  const known = deviceKeys.flatMap((k) => history[k] ?? []);
  const first = known.reduce((m, tr) => Math.min(m, tr.t), Infinity);
  const last = known.reduce((m, tr) => Math.max(m, tr.t), -Infinity);
  const to = Math.max(now, last + 1);
  const from = Math.max(to - win.ms, Number.isFinite(first) ? first : to - win.ms);
  return (
    <div>
      {deviceKeys.map((key) => (
        <HealthStrip
          key={key}
          device={key.slice(key.lastIndexOf('/') + 1)}
          transitions={history[key] ?? []}
          from={from}
          to={to}
        />
      ))}
    </div>
  );
}
