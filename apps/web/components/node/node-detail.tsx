'use client';
// The node page: resources with the why (device plugins and DRA drivers), NUMA map with device
// tiles of both APIs, pod assignments, DRA claims, fault controls and the event timeline, all read
// from one cached NodeSnapshot that the node's stream keeps current. Fault controls never flip state themselves: after the gateway accepts a request
// the tile shows "waiting…" until the stream reports the device's new state.
import { useCallback, useEffect, useMemo, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { FaultState, NodeSnapshot } from '@plugboard/api';
import { apiFetch, ApiError, nodeApiPath } from '../../lib/api';
import { configQuery, nodeQuery, queryKeys } from '../../lib/queries';
import { useLiveQuery } from '../../lib/use-live-query';
import { podFootprint, tileFaultHeld } from '../../lib/node-view';
import { draDeviceKeyOf, hasDra } from '../../lib/dra-view';
import { formatTime } from '../../lib/format';
import { useToken } from '../../lib/token';
import { markAfterPaint } from '../../lib/perf-marks';
import { LiveIndicator } from '../live-indicator';
import { ProblemNotice } from '../problem-notice';
import { FaultDialog, type FaultRequest } from '../faults/fault-dialog';
import { ScenarioPanel } from '../faults/scenario-panel';
import { TokenForm } from '../faults/token-form';
import type { FaultControl } from './device-tile';
import { DeviceDrawer } from './device-drawer';
import { ClaimsTable } from './claims-table';
import { DraDeviceDrawer } from './dra-device-drawer';
import { DraDrivers } from './dra-drivers';
import { EventTimeline } from './event-timeline';
import { NumaMap } from './numa-map';
import { PodTable } from './pod-table';
import { ResourcePanel } from './resource-panel';
import { NodeHistoryPanel, useHistoryFeed } from '../history/node-history';
import { SourceNotices } from './source-notices';
import { TryPlace } from './try-place';
import { WhyHere } from './why-here';

/** How long to wait for the stream to show an accepted fault change before saying so. */
const AWAIT_STREAM_MS = 30_000;

interface Awaiting {
  expectFaulted: boolean;
  at: number;
}

function errorText(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.status === 401) return `${err.title}: ${err.detail} — enter a valid bearer token.`;
    if (err.status === 403)
      return `${err.title}: ${err.detail} — your token may not inject faults on this gateway.`;
    return `${err.title}: ${err.detail}`;
  }
  return err instanceof Error ? err.message : String(err);
}

async function sendFaultRequest(nodeName: string, req: FaultRequest, token: string | null): Promise<void> {
  if (req.kind === 'inject') {
    await apiFetch(nodeApiPath(nodeName, 'faults'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        resource: req.resource,
        deviceId: req.deviceId,
        reason: req.reason,
        ...(req.ttlSeconds !== null ? { ttlSeconds: req.ttlSeconds } : {}),
        // DRA devices: the taint (null = health only) is always said, never left to a default.
        ...(req.taint !== undefined ? { taint: req.taint } : {}),
      }),
      token,
    });
    return;
  }
  // One request clears every fault holding the device (its replicas included).
  const q = new URLSearchParams({ resource: req.resource, deviceId: req.deviceId });
  await apiFetch(nodeApiPath(nodeName, `faults?${q}`), { method: 'DELETE', token });
}

export function NodeDetail({ name }: { name: string }) {
  const client = useQueryClient();
  const query = useQuery(nodeQuery(client, name));
  const onHistory = useHistoryFeed(name);
  const status = useLiveQuery<NodeSnapshot>(
    queryKeys.node(name),
    `${nodeApiPath(name, 'stream')}?history=true`,
    onHistory,
  );
  const config = useQuery(configQuery());
  const [token] = useToken();
  const node = query.data?.data;

  const [dialogTile, setDialogTile] = useState<string | null>(null);
  const [drawerTile, setDrawerTile] = useState<string | null>(null);
  const [awaiting, setAwaiting] = useState<ReadonlyMap<string, Awaiting>>(new Map());
  const [notice, setNotice] = useState<string | null>(null);
  const [selectedPod, setSelectedPod] = useState<string | null>(null);
  // Hovering a pod row previews its footprint; a selection sticks until cleared.
  const [hoveredPod, setHoveredPod] = useState<string | null>(null);
  const shownPod = hoveredPod ?? selectedPod;
  const footprint = useMemo(
    () => (node && shownPod ? podFootprint(node, shownPod) : undefined),
    [node, shownPod],
  );
  const selectPod = useCallback((podKey: string | null) => {
    setSelectedPod(podKey);
    if (podKey) document.getElementById('numa-map')?.scrollIntoView({ block: 'start' });
  }, []);

  // Deep link: ?device=<resource>/<id> (a DRA device: dra:<driver>/<pool>/<device>) opens its drawer.
  useEffect(() => {
    const d = new URLSearchParams(window.location.search).get('device');
    if (d) setDrawerTile(d);
  }, []);
  const openDrawer = useCallback((tileKey: string) => {
    setDrawerTile(tileKey);
    const url = new URL(window.location.href);
    url.searchParams.set('device', tileKey);
    window.history.replaceState(null, '', url);
  }, []);
  const closeDrawer = useCallback(() => {
    setDrawerTile(null);
    const url = new URL(window.location.href);
    url.searchParams.delete('device');
    window.history.replaceState(null, '', url);
  }, []);
  const openFaultDialog = useCallback((tileKey: string) => setDialogTile(tileKey), []);

  const mutation = useMutation({
    mutationFn: (req: FaultRequest) => sendFaultRequest(name, req, token),
    onSuccess: (_data, req) => {
      setAwaiting((m) =>
        new Map(m).set(req.tileKey, { expectFaulted: req.kind === 'inject', at: Date.now() }),
      );
      setDialogTile(null);
      setNotice(null);
    },
  });

  // Resolve "waiting…" only from the stream: when the gateway shows the fault held (or released).
  // The tile then says what the kubelet was told: "fault on", or "fault pending" while it is not.
  useEffect(() => {
    if (!node || awaiting.size === 0) return;
    let changed = false;
    const next = new Map(awaiting);
    for (const [tileKey, a] of awaiting) {
      const held = tileFaultHeld(node, tileKey);
      if (held === a.expectFaulted) {
        next.delete(tileKey);
        changed = true;
      }
    }
    if (changed) setAwaiting(next);
  }, [node, awaiting]);
  useEffect(() => {
    if (awaiting.size === 0) return;
    const oldest = Math.min(...[...awaiting.values()].map((a) => a.at));
    const t = setTimeout(
      () => {
        const now = Date.now();
        const expired = [...awaiting].filter(([, a]) => now - a.at >= AWAIT_STREAM_MS).map(([k]) => k);
        if (expired.length === 0) return;
        setNotice(
          `The gateway accepted the request, but after ${AWAIT_STREAM_MS / 1000} s the stream still does not show the change for ${expired.join(', ')}.`,
        );
        setAwaiting((m) => {
          const n = new Map(m);
          for (const k of expired) n.delete(k);
          return n;
        });
      },
      Math.max(0, oldest + AWAIT_STREAM_MS - Date.now()),
    );
    return () => clearTimeout(t);
  }, [awaiting]);

  const hasNode = node !== undefined;
  useEffect(() => {
    if (hasNode) markAfterPaint('plugboard:node-rendered');
  }, [hasNode]);

  const pendingTiles = useMemo(() => {
    const s = new Set(awaiting.keys());
    if (mutation.isPending && mutation.variables) s.add(mutation.variables.tileKey);
    return s;
  }, [awaiting, mutation.isPending, mutation.variables]);

  const disabledReason: string | null = !node
    ? 'Waiting for data'
    : node.gateway.authRequired && !token
      ? 'This gateway requires a bearer token for faults: enter one above.'
      : status.state !== 'live'
        ? 'Fault controls are disabled until the live stream is connected (the map may be stale).'
        : null;
  const hiddenReason: string | null =
    config.data && !config.data.faultsEnabled
      ? 'Fault injection is disabled on this dashboard (PLUGBOARD_FAULTS_ENABLED=false).'
      : node && !node.gateway.faultsEnabled
        ? 'Fault injection is disabled on this gateway (gateway.faults.enabled is false), so no fault controls are shown.'
        : null;
  const faultControl = useMemo<FaultControl>(
    () =>
      hiddenReason !== null
        ? { mode: 'hidden' }
        : disabledReason !== null
          ? { mode: 'disabled', reason: disabledReason, reasonId: 'fault-disabled-reason' }
          : { mode: 'enabled' },
    [hiddenReason, disabledReason],
  );

  if (!node) {
    return (
      <>
        <h1>Node {name}</h1>
        {query.isPending && <p role="status">Loading node {name}…</p>}
        {query.isError && (
          <ProblemNotice
            title={
              query.error instanceof ApiError && query.error.status === 404
                ? `Unknown node ${name}`
                : `Cannot reach the gateway of ${name}`
            }
            error={query.error}
          >
            <p>The page keeps trying through the live stream; data appears as soon as the gateway answers.</p>
          </ProblemNotice>
        )}
      </>
    );
  }

  return (
    <>
      <div className="row">
        <h1>Node {node.nodeName}</h1>
        <span className="spacer" />
        <LiveIndicator status={status} dataAt={query.data?.receivedAt ?? null} />
      </div>
      <p className="muted">
        gateway {node.gateway.version} · started {formatTime(node.gateway.startedAt)} · updated{' '}
        {formatTime(node.updatedAt)} · {Object.keys(node.devices).length}{' '}
        {hasDra(node.dra)
          ? `device-plugin devices · ${Object.keys(node.dra.devices).length} DRA devices`
          : 'devices'}{' '}
        · {Object.keys(node.pods).length} pods
      </p>
      {status.state === 'failed' && (
        <ProblemNotice
          title={`Data is stale since ${formatTime(new Date(query.data?.receivedAt ?? Date.now()).toISOString())}`}
        >
          <p>{status.error}</p>
        </ProblemNotice>
      )}
      <SourceNotices node={node} />

      <h2>Resources</h2>
      <ResourcePanel node={node} />
      {hasDra(node.dra) && (
        <>
          <h2 id="dra-drivers">DRA drivers</h2>
          <DraDrivers dra={node.dra} />
        </>
      )}
      <h2 id="history">Capacity over time</h2>
      <NodeHistoryPanel node={node} />

      <h2 id="numa-map">NUMA map</h2>
      {selectedPod && (
        <p className="notice info row" role="status">
          <span>
            Highlighting the devices, CPUs and memory of <span className="mono">{selectedPod}</span>
            {node.pods[selectedPod]
              ? ` (${node.pods[selectedPod].numaAlignment.reason})`
              : ' (the pod is gone)'}
            .
          </span>
          <button type="button" onClick={() => setSelectedPod(null)}>
            Clear highlight
          </button>
        </p>
      )}
      {faultControl.mode === 'disabled' && (
        <p id="fault-disabled-reason" className="muted">
          {faultControl.reason}
        </p>
      )}
      {notice && (
        <p className="notice warn" role="alert">
          {notice}
        </p>
      )}
      <NumaMap
        node={node}
        faultControl={faultControl}
        pendingTiles={pendingTiles}
        {...(footprint ? { highlightTiles: footprint } : {})}
        highlightPod={shownPod}
        onSelectPod={selectPod}
        onOpen={openDrawer}
        onToggleFault={openFaultDialog}
      />

      {selectedPod && node.pods[selectedPod] && <WhyHere node={node} pod={node.pods[selectedPod]} />}

      <h2>Pods</h2>
      <PodTable node={node} selectedPod={selectedPod} onSelectPod={selectPod} onHoverPod={setHoveredPod} />

      {hasDra(node.dra) && (
        <>
          <h2 id="dra-claims">DRA claims</h2>
          <ClaimsTable node={node} onOpenDevice={openDrawer} />
        </>
      )}

      {node.topology && (
        <>
          <h2>Try to place</h2>
          <TryPlace node={node} token={token} />
        </>
      )}

      <h2>Fault injection</h2>
      {hiddenReason ? (
        <p className="notice info">{hiddenReason}</p>
      ) : (
        <>
          <p className="muted">
            Every fault here is simulated by the plugin&apos;s (or DRA driver&apos;s) fault overlay and
            travels the real kubelet path. Use the <em>Fault</em> switch on a device tile, or a scenario
            below.
          </p>
          {node.gateway.authRequired && <TokenForm />}
          <ActiveFaults node={node} />
          <ScenarioPanel node={node} token={token} disabledReason={disabledReason} />
        </>
      )}

      <h2>Events</h2>
      <EventTimeline events={node.events} />

      {dialogTile && (
        <FaultDialog
          node={node}
          tileKey={dialogTile}
          pending={mutation.isPending}
          error={mutation.error ? errorText(mutation.error) : null}
          onSubmit={(req) => mutation.mutate(req)}
          onCancel={() => {
            mutation.reset();
            setDialogTile(null);
          }}
        />
      )}
      {drawerTile &&
        (draDeviceKeyOf(drawerTile) !== null ? (
          <DraDeviceDrawer node={node} deviceKey={draDeviceKeyOf(drawerTile)!} onClose={closeDrawer} />
        ) : (
          <DeviceDrawer node={node} tileKey={drawerTile} onClose={closeDrawer} />
        ))}
    </>
  );
}

/** What each fault's state means to the kubelet, in words. */
const FAULT_STATE_TEXT: Record<FaultState['state'], string> = {
  active: 'kubelet told Unhealthy',
  pending: 'pending',
  'device-absent': 'device absent',
  failed: 'failed',
};

/** The faults the gateway holds, from the stream, each with where it stands against the kubelet. */
function ActiveFaults({ node }: { node: NodeSnapshot }) {
  const faults = Object.values(node.faults).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  return (
    <section aria-labelledby="active-faults" className="card" style={{ marginBottom: '0.75rem' }}>
      <h3 id="active-faults">Active simulated faults ({faults.length})</h3>
      {faults.length === 0 ? (
        <p className="muted">None.</p>
      ) : (
        <ul>
          {faults.map((f) => (
            <li key={f.id} data-fault-state={f.state}>
              <span className="badge warn">simulated</span> <span className="mono">{f.deviceId}</span> (
              {f.resource}) — {f.reason}; since {formatTime(f.createdAt)}
              {f.expiresAt ? `, expires ${formatTime(f.expiresAt)}` : ', until cleared'}
              {f.scenarioId ? `, scenario ${f.scenarioId}` : ''}
              {f.taint ? `, taint ${f.taint}` : ''}.{' '}
              <span className={`badge${f.state === 'active' ? '' : ' warn'}`}>
                {FAULT_STATE_TEXT[f.state]}
              </span>
              {f.stateReason ? ` ${f.stateReason}` : ''}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
