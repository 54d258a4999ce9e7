// DRA as the gateway reports it: the in-process drivers' events (health transitions, registration,
// prepare/unprepare outcomes, slice publication errors) and what the node model shows changing on
// the DRA side (a device tainted or untainted — by its driver, a fault or a DeviceTaintRule — and a
// claim moving between pending, allocated, reserved and prepared, or going away) become ring events,
// Kubernetes Events on the Node and log lines, like the device plugins' (plugin-events.ts).
import type { Logger } from 'pino';
import type { DraClaimState, DraDeviceState, DraState, NodeSnapshot } from '@plugboard/api';
import type { NodeModel } from '../model/node-model.js';
import type { DraDriverHooks } from '../sources/dra-drivers.js';
import { deviceHealthEvent, type GatewayEvents } from './gateway-events.js';

export interface DraEventDeps {
  model: Pick<NodeModel, 'snapshot'>;
  events: GatewayEvents;
  logger: Logger;
  /** Ask the PodResources poller (if any) to look again: prepared claims show there. */
  pollSoon: (delayMs?: number) => void;
}

const deviceOf = (s: NodeSnapshot, driver: string, id: string): DraDeviceState | undefined =>
  Object.values(s.dra?.devices ?? {}).find((d) => d.driver === driver && d.sourceId === id);

const podRef = (podKey: string | undefined) => {
  if (!podKey) return null;
  const i = podKey.indexOf('/');
  return { namespace: podKey.slice(0, i), name: podKey.slice(i + 1), container: null };
};

export function draDriverEventHooks(deps: DraEventDeps): DraDriverHooks {
  const { model, events, logger, pollSoon } = deps;
  return {
    health: (driver, e) => {
      const d = deviceOf(model.snapshot(), driver, e.deviceId);
      const name = d ? d.key : `${driver}/${e.deviceId}`;
      const message = `${name} is ${e.health}${e.reason ? `: ${e.reason}` : ''}`;
      deviceHealthEvent(events, {
        resource: driver,
        deviceIds: [e.deviceId],
        pod: podRef(d?.allocations[0]?.pods[0]),
        message,
        at: e.at,
        health: e.health,
      });
    },
    registered: (driver, e) => {
      events.ring({
        kind: 'registration',
        resource: driver,
        message: `DRA driver ${driver} registered with the kubelet`,
        at: e.at,
      });
      logger.info({ driver }, 'DRA driver registered');
    },
    registrationError: (driver, e) => {
      events.ring({ kind: 'registration', resource: driver, message: `DRA driver ${driver}: ${e.error}` });
      logger.warn({ driver, error: e.error }, 'DRA driver registration failed');
    },
    prepared: (driver, e) => {
      for (const c of e.claims.filter((x) => x.error !== null)) {
        events.ring({
          kind: 'claim',
          resource: driver,
          message: `NodePrepareResources for claim ${c.namespace}/${c.name} failed: ${c.error}`,
        });
      }
      // PodResources lists a claim once the kubelet has it prepared.
      pollSoon(50);
    },
    unprepared: () => pollSoon(50),
    slicesError: (driver, e) =>
      logger.warn({ driver, error: e.error, retryInMs: e.retryInMs }, 'ResourceSlice publication failed'),
  };
}

const taintId = (t: DraDeviceState['taints'][number]): string =>
  `${t.key}${t.value === null ? '' : `=${t.value}`}:${t.effect} (${t.source})`;

function claimMessage(c: DraClaimState): string {
  switch (c.phase) {
    case 'pending':
      return `claim ${c.key} is pending${c.pendingReason ? `: ${c.pendingReason}` : ''}`;
    case 'allocated':
    case 'reserved':
      return `claim ${c.key} is ${c.phase}: ${c.devices.map((d) => d.deviceKey).join(', ') || 'no devices'}`;
    case 'prepared':
      return `claim ${c.key} is prepared for ${c.reservedFor.join(', ') || 'no pod'}`;
  }
}

/**
 * Compares each new snapshot's DRA section with the last one: taints put on or taken off a device
 * and claim phase changes become events. Nothing is reported until the Kubernetes source is first
 * in sync, so a (re)started gateway does not announce what was already there.
 */
export function attachDraModelEvents(
  model: Pick<NodeModel, 'snapshot' | 'on' | 'off'>,
  events: GatewayEvents,
): () => void {
  let prev: DraState | null = null;
  const onChange = ({ snapshot: s }: { snapshot: NodeSnapshot }): void => {
    const next = s.dra;
    if (!next || next === prev) return;
    if (prev === null || s.sources.kubernetes.status !== 'ok') {
      if (s.sources.kubernetes.status === 'ok' || s.sources.kubernetes.status === 'disabled') prev = next;
      return;
    }
    if (next.devices !== prev.devices) {
      for (const d of Object.values(next.devices)) {
        const before = new Set((prev.devices[d.key]?.taints ?? []).map(taintId));
        const after = new Set(d.taints.map(taintId));
        for (const t of after) {
          if (before.has(t)) continue;
          const message = `${d.key} tainted ${t}`;
          events.ring({ kind: 'taint', resource: d.driver, deviceIds: [d.sourceId ?? d.name], message });
          events.node('Warning', 'DeviceTainted', message);
        }
        for (const t of before) {
          if (after.has(t)) continue;
          const message = `${d.key} untainted ${t}`;
          events.ring({ kind: 'taint', resource: d.driver, deviceIds: [d.sourceId ?? d.name], message });
          events.node('Normal', 'DeviceUntainted', message);
        }
      }
    }
    if (next.claims !== prev.claims) {
      for (const c of Object.values(next.claims)) {
        const was = prev.claims[c.key];
        if (was?.phase === c.phase) continue;
        events.ring({
          kind: 'claim',
          pod: podRef(c.reservedFor[0] ?? c.owner?.pod),
          message: claimMessage(c),
        });
      }
      for (const c of Object.values(prev.claims)) {
        if (next.claims[c.key]) continue;
        events.ring({
          kind: 'claim',
          pod: podRef(c.reservedFor[0] ?? c.owner?.pod),
          message: `claim ${c.key} is gone from this node's view`,
        });
      }
    }
    prev = next;
  };
  const listener = onChange as never;
  model.on('change', listener);
  return () => model.off('change', listener);
}
