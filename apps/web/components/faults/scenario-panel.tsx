'use client';
// Scenarios: fail a whole NUMA node, fail N random devices, or flap a device, each with a TTL;
// running scenarios listed with Stop. Same rules as single faults: preview, confirm with Cancel
// focused, never optimistic (the map changes only when the stream says so).
import { useMemo, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { NodeSnapshot } from '@plugboard/api';
import { apiFetch, nodeApiPath, ApiError } from '../../lib/api';
import { blastRadius, physicalId, servedByOf } from '../../lib/node-view';
import { formatTime } from '../../lib/format';
import { ConfirmDialog } from './confirm-dialog';

type ScenarioKind = 'fail-numa-node' | 'fail-devices' | 'flap-device';

interface ScenarioSummary {
  id: string;
  name: string;
  startedAt: string;
  expiresAt: string;
  faultIds: string[];
  steps: { action: string; status: string; detail: string | null }[];
}

export function scenariosKey(node: string) {
  return ['node', node, 'scenarios'] as const;
}

export function ScenarioPanel({
  node,
  token,
  disabledReason,
}: {
  node: NodeSnapshot;
  token: string | null;
  disabledReason: string | null;
}) {
  const client = useQueryClient();
  const name = node.nodeName;
  // Scenarios never pick another plugin's devices (nobody here can fault them): only the gateway's own.
  const resources = useMemo(
    () =>
      Object.values(node.resources)
        .filter((r) => servedByOf(r) === 'plugin')
        .map((r) => r.name)
        .sort(),
    [node.resources],
  );
  const numaKeys = useMemo(() => Object.keys(node.numa.nodes).filter((k) => k !== 'none'), [node.numa.nodes]);
  const [kind, setKind] = useState<ScenarioKind>('fail-numa-node');
  const [resource, setResource] = useState('');
  const [numaNode, setNumaNode] = useState(numaKeys[0] ?? '0');
  const [count, setCount] = useState('2');
  const [flapDevice, setFlapDevice] = useState('');
  const [periodMs, setPeriodMs] = useState('2000');
  const [ttl, setTtl] = useState('60');
  const [confirming, setConfirming] = useState(false);

  const list = useQuery({
    queryKey: scenariosKey(name),
    queryFn: async () => (await apiFetch<{ items: ScenarioSummary[] }>(nodeApiPath(name, 'scenarios'))).items,
    refetchInterval: (q) => ((q.state.data?.length ?? 0) > 0 ? 5000 : false),
  });

  const effectiveResource = resource || resources[0] || '';
  const physicalDevices = useMemo(() => {
    const ids = new Set<string>();
    for (const d of Object.values(node.devices)) if (d.resource === effectiveResource) ids.add(physicalId(d));
    return [...ids];
  }, [node.devices, effectiveResource]);

  const body = useMemo((): Record<string, unknown> => {
    const ttlSeconds = Number(ttl);
    switch (kind) {
      case 'fail-numa-node':
        return {
          action: kind,
          numaNode: Number(numaNode),
          ...(resource ? { resource } : {}),
          ttlSeconds,
          reason: 'simulated NUMA node outage',
        };
      case 'fail-devices':
        return {
          action: kind,
          resource: effectiveResource,
          count: Number(count),
          ttlSeconds,
          reason: 'simulated device failures',
        };
      case 'flap-device':
        return {
          action: kind,
          resource: effectiveResource,
          deviceId: flapDevice || physicalDevices[0],
          periodMs: Number(periodMs),
          ttlSeconds,
          reason: 'simulated flapping device',
        };
    }
  }, [kind, numaNode, resource, effectiveResource, count, flapDevice, physicalDevices, periodMs, ttl]);

  const preview = useMemo(() => {
    if (kind === 'fail-numa-node') {
      const keys = Object.values(node.devices)
        .filter((d) => d.numaNodes.includes(Number(numaNode)) && (!resource || d.resource === resource))
        .map((d) => d.key);
      return { devices: keys.length, pods: blastRadius(node, keys), note: null };
    }
    if (kind === 'flap-device') {
      const id = flapDevice || physicalDevices[0];
      const keys = Object.values(node.devices)
        .filter((d) => d.resource === effectiveResource && physicalId(d) === id)
        .map((d) => d.key);
      return { devices: keys.length, pods: blastRadius(node, keys), note: null };
    }
    const all = Object.values(node.devices)
      .filter((d) => d.resource === effectiveResource)
      .map((d) => d.key);
    return {
      devices: Number(count),
      pods: blastRadius(node, all),
      note: `${count} random devices of ${effectiveResource}: any of these pods may be hit.`,
    };
  }, [kind, node, numaNode, resource, flapDevice, physicalDevices, effectiveResource, count]);

  const ttlInvalid = !Number.isInteger(Number(ttl)) || Number(ttl) < 1;

  const start = useMutation({
    mutationFn: () =>
      apiFetch<{ id: string }>(nodeApiPath(name, 'scenarios'), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        token,
      }),
    onSuccess: () => setConfirming(false),
    onSettled: () => client.invalidateQueries({ queryKey: scenariosKey(name) }),
  });
  const stop = useMutation({
    mutationFn: (id: string | null) =>
      apiFetch<void>(nodeApiPath(name, id ? `scenarios/${encodeURIComponent(id)}` : 'scenarios'), {
        method: 'DELETE',
        token,
      }),
    onSettled: () => client.invalidateQueries({ queryKey: scenariosKey(name) }),
  });

  const disabled = disabledReason !== null;
  return (
    <section aria-labelledby="scenarios-heading" className="card">
      <h3 id="scenarios-heading">Simulated fault scenarios</h3>
      {disabledReason && <p className="muted">{disabledReason}</p>}
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault();
          start.reset();
          setConfirming(true);
        }}
      >
        <label>
          Scenario
          <select value={kind} onChange={(e) => setKind(e.target.value as ScenarioKind)}>
            <option value="fail-numa-node">Fail a NUMA node</option>
            <option value="fail-devices">Fail N random devices</option>
            <option value="flap-device">Flap a device</option>
          </select>
        </label>
        {kind === 'fail-numa-node' && (
          <label>
            NUMA node
            <select value={numaNode} onChange={(e) => setNumaNode(e.target.value)}>
              {numaKeys.map((k) => (
                <option key={k} value={k}>
                  {k}
                </option>
              ))}
            </select>
          </label>
        )}
        <label>
          Resource
          <select value={resource} onChange={(e) => setResource(e.target.value)}>
            {kind === 'fail-numa-node' && <option value="">All resources</option>}
            {resources.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </label>
        {kind === 'fail-devices' && (
          <label>
            Devices
            <input
              type="number"
              min={1}
              value={count}
              onChange={(e) => setCount(e.target.value)}
              style={{ width: '5em' }}
            />
          </label>
        )}
        {kind === 'flap-device' && (
          <>
            <label>
              Device
              <select
                value={flapDevice || physicalDevices[0] || ''}
                onChange={(e) => setFlapDevice(e.target.value)}
              >
                {physicalDevices.map((id) => (
                  <option key={id} value={id}>
                    {id}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Period (ms)
              <input
                type="number"
                min={10}
                value={periodMs}
                onChange={(e) => setPeriodMs(e.target.value)}
                style={{ width: '6em' }}
              />
            </label>
          </>
        )}
        <label>
          TTL (seconds)
          <input
            type="number"
            min={1}
            value={ttl}
            onChange={(e) => setTtl(e.target.value)}
            style={{ width: '6em' }}
            aria-invalid={ttlInvalid}
          />
        </label>
        <button type="submit" disabled={disabled || ttlInvalid || start.isPending}>
          Start scenario…
        </button>
      </form>
      {confirming && (
        <ConfirmDialog
          title={`Start the "${kind}" scenario on ${name}?`}
          confirmLabel="Start simulated scenario"
          danger
          pending={start.isPending}
          error={
            start.error instanceof ApiError
              ? `${start.error.title}: ${start.error.detail}`
              : start.error
                ? String(start.error)
                : null
          }
          onConfirm={() => start.mutate()}
          onCancel={() => setConfirming(false)}
        >
          <p className="notice warn">
            Simulated faults for {ttl} s: devices go Unhealthy through the plugin and the kubelet, then heal
            when the scenario ends.
          </p>
          <p>
            {preview.devices} device(s) targeted. {preview.note}
          </p>
          <h3>Pods that will be affected</h3>
          {preview.pods.length === 0 ? (
            <p>No pod holds these devices.</p>
          ) : (
            <ul aria-label="Affected pods">
              {preview.pods.map((p) => (
                <li key={p.key} className="mono">
                  {p.key}
                </li>
              ))}
            </ul>
          )}
        </ConfirmDialog>
      )}
      <h4>Running scenarios</h4>
      {list.isError && <p className="notice bad">Cannot list scenarios: {list.error.message}</p>}
      {list.data && list.data.length === 0 && <p className="muted">None.</p>}
      {list.data && list.data.length > 0 && (
        <ul>
          {list.data.map((s) => (
            <li key={s.id} className="row">
              <span className="badge warn">simulated</span>
              <span className="mono">{s.name}</span>
              <span className="muted">
                until {formatTime(s.expiresAt)} · {s.faultIds.length} faults held
              </span>
              <button type="button" disabled={disabled || stop.isPending} onClick={() => stop.mutate(s.id)}>
                Stop {s.name}
              </button>
            </li>
          ))}
          <li>
            <button type="button" disabled={disabled || stop.isPending} onClick={() => stop.mutate(null)}>
              Stop all scenarios
            </button>
          </li>
        </ul>
      )}
      {stop.error && <p className="notice bad">{stop.error.message}</p>}
    </section>
  );
}
