'use client';
// The node page's fault requests: which tile's dialog is open, the request to the gateway, and the
// reconciliation that keeps a tile "waiting…" until the node's stream shows the change. Nothing
// here flips a device's state: the switch reads the snapshot, and an accepted request only marks
// its tile as awaiting the stream (or, after AWAIT_STREAM_MS, says that the stream never showed it).
import { useCallback, useEffect, useMemo, useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import type { DraTaintEffect, NodeSnapshot } from '@plugboard/api';
import { apiFetch, ApiError, nodeApiPath } from '../../lib/api';
import { tileFaultHeld } from '../../lib/node-view';
import { draDeviceOfTile, draTaintRuleView } from '../../lib/dra-view';
import type { FaultRequest } from '../faults/fault-dialog';

/** How long to wait for the stream to show an accepted fault change before saying so. */
export const AWAIT_STREAM_MS = 30_000;

/** An accepted request whose effect the stream has not shown yet. */
export interface Awaiting {
  expectFaulted: boolean;
  /** A DeviceTaintRule fault: the effect the stream must show the rule with (a dry run, then stronger). */
  expectRuleEffect?: DraTaintEffect;
  /** When the gateway accepted it (ms since the epoch). */
  at: number;
}

export type AwaitingTiles = ReadonlyMap<string, Awaiting>;

/**
 * The awaited tiles the snapshot has not settled yet: a tile leaves once the gateway shows its
 * fault held (inject) or released (clear). The same map when nothing settled, so a caller can
 * skip a state update.
 */
export function unsettledTiles(node: NodeSnapshot, awaiting: AwaitingTiles): AwaitingTiles {
  let next: Map<string, Awaiting> | null = null;
  for (const [tileKey, a] of awaiting) {
    if (tileFaultHeld(node, tileKey) !== a.expectFaulted) continue;
    if (a.expectRuleEffect !== undefined && tileRuleEffect(node, tileKey) !== a.expectRuleEffect) continue;
    next ??= new Map(awaiting);
    next.delete(tileKey);
  }
  return next ?? awaiting;
}

/** The effect of a DRA tile's DeviceTaintRule as the API server reports it (null: none observed). */
function tileRuleEffect(node: NodeSnapshot, tileKey: string): DraTaintEffect | null {
  const d = draDeviceOfTile(node, tileKey);
  return (d && draTaintRuleView(node, d)?.status?.effect) ?? null;
}

/** The awaited tiles accepted at least AWAIT_STREAM_MS before `now`. */
export function expiredTiles(awaiting: AwaitingTiles, now: number): string[] {
  return [...awaiting].filter(([, a]) => now - a.at >= AWAIT_STREAM_MS).map(([k]) => k);
}

/** A failed request in words, with what to do about 401/403. */
export function faultErrorText(err: unknown): string {
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

export interface NodeFaults {
  /** The tile whose fault dialog is open. */
  dialogTile: string | null;
  openDialog: (tileKey: string) => void;
  /** Closes the dialog and forgets a failed request's error. */
  cancelDialog: () => void;
  submit: (req: FaultRequest) => void;
  /** A request is on its way to the gateway. */
  sending: boolean;
  /** Why the last request failed, in words; null when it did not. */
  error: string | null;
  /** Tiles whose switch shows "waiting…": a request in flight, or accepted and not yet in the stream. */
  pendingTiles: ReadonlySet<string>;
  /** Said when the stream did not show an accepted change within AWAIT_STREAM_MS. */
  notice: string | null;
}

/** `node` is the stream's current snapshot (undefined until the first one). */
export function useNodeFaults(
  nodeName: string,
  node: NodeSnapshot | undefined,
  token: string | null,
): NodeFaults {
  const [dialogTile, setDialogTile] = useState<string | null>(null);
  const [awaiting, setAwaiting] = useState<AwaitingTiles>(new Map());
  const [notice, setNotice] = useState<string | null>(null);

  const mutation = useMutation({
    mutationFn: (req: FaultRequest) => sendFaultRequest(nodeName, req, token),
    onSuccess: (_data, req) => {
      setAwaiting((m) =>
        new Map(m).set(req.tileKey, {
          expectFaulted: req.kind === 'inject',
          at: Date.now(),
          ...(req.kind === 'inject' && req.ruleEffect !== undefined
            ? { expectRuleEffect: req.ruleEffect }
            : {}),
        }),
      );
      setDialogTile(null);
      setNotice(null);
    },
  });

  // Resolve "waiting…" only from the stream: when the gateway shows the fault held (or released).
  // The tile then says what the kubelet was told: "fault on", or "fault pending" while it is not.
  useEffect(() => {
    if (!node || awaiting.size === 0) return;
    const next = unsettledTiles(node, awaiting);
    if (next !== awaiting) setAwaiting(next);
  }, [node, awaiting]);
  useEffect(() => {
    if (awaiting.size === 0) return;
    const oldest = Math.min(...[...awaiting.values()].map((a) => a.at));
    const t = setTimeout(
      () => {
        const expired = expiredTiles(awaiting, Date.now());
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

  const pendingTiles = useMemo(() => {
    const s = new Set(awaiting.keys());
    if (mutation.isPending && mutation.variables) s.add(mutation.variables.tileKey);
    return s;
  }, [awaiting, mutation.isPending, mutation.variables]);

  const { mutate, reset } = mutation;
  const openDialog = useCallback((tileKey: string) => setDialogTile(tileKey), []);
  const cancelDialog = useCallback(() => {
    reset();
    setDialogTile(null);
  }, [reset]);
  const submit = useCallback((req: FaultRequest) => mutate(req), [mutate]);

  return {
    dialogTile,
    openDialog,
    cancelDialog,
    submit,
    sending: mutation.isPending,
    error: mutation.error ? faultErrorText(mutation.error) : null,
    pendingTiles,
    notice,
  };
}
