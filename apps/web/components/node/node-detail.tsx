'use client';
// The node page: resources with the why (device plugins and DRA drivers), NUMA map with device
// tiles of both APIs, pod assignments, DRA claims, fault controls and the event timeline, all read
// from one cached NodeSnapshot that the node's stream keeps current. Fault requests and their
// "waiting…" until the stream shows them are use-node-faults.ts; the held faults, active-faults.tsx.
import { useCallback, useEffect, useMemo, useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { NodeSnapshot } from '@plugboard/api';
import { ApiError, nodeApiPath } from '../../lib/api';
import { configQuery, nodeQuery, queryKeys } from '../../lib/queries';
import { useLiveQuery } from '../../lib/use-live-query';
import { podFootprint } from '../../lib/node-view';
import { draDeviceKeyOf, hasDra } from '../../lib/dra-view';
import { formatTime } from '../../lib/format';
import { useToken } from '../../lib/token';
import { markAfterPaint } from '../../lib/perf-marks';
import { LiveIndicator } from '../live-indicator';
import { ProblemNotice } from '../problem-notice';
import { FaultDialog } from '../faults/fault-dialog';
import { ScenarioPanel } from '../faults/scenario-panel';
import { TokenForm } from '../faults/token-form';
import { ActiveFaults } from './active-faults';
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
import { useNodeFaults } from './use-node-faults';
import { WhyHere } from './why-here';

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

  const faults = useNodeFaults(name, node, token);
  const [drawerTile, setDrawerTile] = useState<string | null>(null);
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
  const hasNode = node !== undefined;
  useEffect(() => {
    if (hasNode) markAfterPaint('plugboard:node-rendered');
  }, [hasNode]);

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
      {faults.notice && (
        <p className="notice warn" role="alert">
          {faults.notice}
        </p>
      )}
      <NumaMap
        node={node}
        faultControl={faultControl}
        pendingTiles={faults.pendingTiles}
        {...(footprint ? { highlightTiles: footprint } : {})}
        highlightPod={shownPod}
        onSelectPod={selectPod}
        onOpen={openDrawer}
        onToggleFault={faults.openDialog}
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

      {faults.dialogTile && (
        <FaultDialog
          node={node}
          tileKey={faults.dialogTile}
          pending={faults.sending}
          error={faults.error}
          onSubmit={faults.submit}
          onCancel={faults.cancelDialog}
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
