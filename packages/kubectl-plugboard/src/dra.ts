// How Dynamic Resource Allocation state reads on the command line: the table cells of DRA devices
// and claims (requests, taints, holders), and the changes between two snapshots that `watch` prints
// (device health, the kubelet's view, taints, faults; claim phases). Pure functions over the wire
// contract (@plugboard/api, "DRA" in docs/API.md).
import type {
  DraClaimRequest,
  DraClaimState,
  DraDeviceCounts,
  DraDeviceState,
  DraState,
} from '@plugboard/api';
import type { Column } from './output.js';

/** The value of the API column and of `api` in JSON items; `--api` takes either, in any case. */
export type DeviceApi = 'device-plugin' | 'DRA';
export const DEVICE_APIS: readonly DeviceApi[] = ['device-plugin', 'DRA'];

/** What the CLI says, once per gateway, when DRA was asked for and the gateway has no `dra` section. */
export function noDraDataWarning(label: string, node: string): string {
  return `warning: no DRA data from this gateway: ${label} (node ${node}; it predates DRA support)\n`;
}

/** The DEVICE cell of a DRA device: `pool/device`, so that driver + this is its whole key. */
export const draDeviceText = (d: Pick<DraDeviceState, 'pool' | 'name'>) => `${d.pool}/${d.name}`;

/** The TAINTS cell: the distinct effects, e.g. `NoExecute` or `NoSchedule,NoExecute`; `-` when none. */
export function taintsText(d: Pick<DraDeviceState, 'taints'>): string {
  const effects = [...new Set(d.taints.map((t) => t.effect))];
  return effects.length ? effects.join(',') : '-';
}

/** One request as `name:count class`, `name:all class`, `name:first-of(…|…)`, ` admin` appended. */
export function requestText(r: DraClaimRequest): string {
  const amount = (mode: DraClaimRequest['allocationMode'], count: number) =>
    mode === 'All' ? 'all' : String(count);
  const what =
    r.deviceClassName === null
      ? `first-of(${r.firstAvailable.map((s) => `${s.name}:${amount(s.allocationMode, s.count)} ${s.deviceClassName}`).join('|')})`
      : `${amount(r.allocationMode, r.count)} ${r.deviceClassName}`;
  return `${r.name}:${what}${r.adminAccess ? ' admin' : ''}`;
}

export const requestsText = (c: Pick<DraClaimState, 'requests'>) =>
  c.requests.map(requestText).join(', ') || '-';

/**
 * The DEVICES cell of a claim: device names, `!` marking one the driver reports unhealthy (as in
 * `pods`), with the driver in front when the claim's devices come from more than one driver.
 */
export function claimDevicesText(c: Pick<DraClaimState, 'devices'>, dra: DraState): string {
  const drivers = new Set(c.devices.map((d) => d.driver));
  return (
    c.devices
      .map((d) => {
        const name = drivers.size > 1 ? `${d.driver}/${d.device}` : d.device;
        return `${name}${dra.devices[d.deviceKey]?.health === 'Unhealthy' ? '!' : ''}`;
      })
      .join(',') || '-'
  );
}

/** The PODS cell: the pods the claim is reserved for (same namespace as the claim, so names only). */
export const claimPodsText = (c: Pick<DraClaimState, 'reservedFor' | 'namespace'>) =>
  c.reservedFor
    .map((p) => (p.startsWith(`${c.namespace}/`) ? p.slice(c.namespace.length + 1) : p))
    .join(',') || '-';

/** The REASON cell: why a claim is pending, or that it is being deleted (e.g. its pod was evicted). */
export function claimReasonText(c: Pick<DraClaimState, 'pendingReason' | 'deleting' | 'phase'>): string {
  if (c.deleting) return 'deleting';
  if (c.phase === 'pending') return c.pendingReason ?? 'waiting for the scheduler';
  return '-';
}

/** The CLAIM and POD cells of a DRA device: the claims it is allocated to and their pods. */
export function draHolderText(d: Pick<DraDeviceState, 'allocations'>): { claim: string; pod: string } {
  if (d.allocations.length === 0) return { claim: '-', pod: '-' };
  return {
    claim: d.allocations.map((a) => a.claim).join(','),
    pod: [...new Set(d.allocations.flatMap((a) => a.pods))].join(',') || '-',
  };
}

/**
 * The count columns of a DRA driver (`nodes`, `watch`): DRA has no capacity/allocatable, so its
 * drivers get a table of their own rather than squeezing published/usable into those columns.
 */
export function draCountColumns<T>(counts: (row: T) => DraDeviceCounts): Column<T>[] {
  const keys = ['published', 'usable', 'allocated', 'free', 'unhealthy', 'tainted'] as const;
  return keys.map((key) => ({ header: key, value: (row: T) => counts(row)[key] }));
}

/** One field of a DRA device or claim that changed between two snapshots. */
export interface DraChange {
  kind: 'device' | 'claim';
  /** `${driver}/${pool}/${device}` or `${namespace}/${name}`. */
  key: string;
  /** `present` is the device or claim appearing (from null) or going away (to null). */
  field: 'present' | 'health' | 'kubeletHealth' | 'taints' | 'fault' | 'phase' | 'deleting';
  from: string | null;
  to: string | null;
  /** With a device's health: its reason; with a claim's phase: why it is pending, when it is. */
  reason?: string;
}

const deviceFields = (d: DraDeviceState) => ({
  health: d.health,
  kubeletHealth: d.kubeletHealth ?? '-',
  taints: taintsText(d),
  fault: d.fault ?? '-',
});

const claimFields = (c: DraClaimState) => ({ phase: c.phase, deleting: c.deleting ? 'yes' : 'no' });

/**
 * What changed in the DRA section from `prev` to `next`: per device health, the kubelet's view,
 * taint effects and fault phase; per claim its phase and deletion; devices and claims that appear
 * or go. The first snapshot (`prev` undefined) is the baseline, not a change. Unchanged objects are
 * skipped by identity: the stream's patches keep every object they do not touch.
 */
export function draChanges(prev: DraState | undefined, next: DraState | undefined): DraChange[] {
  if (prev === undefined || next === undefined || prev === next) return [];
  const out: DraChange[] = [];
  diff('device', prev.devices, next.devices, deviceFields, (d) => d.reason ?? undefined, out);
  const pendingReason = (c: DraClaimState) =>
    c.phase === 'pending' ? (c.pendingReason ?? undefined) : undefined;
  diff('claim', prev.claims, next.claims, claimFields, pendingReason, out);
  return out;
}

function diff<T, F extends Record<string, string>>(
  kind: DraChange['kind'],
  before: Record<string, T>,
  after: Record<string, T>,
  fields: (x: T) => F,
  reason: (x: T) => string | undefined,
  out: DraChange[],
): void {
  if (before === after) return;
  const withReason = (c: DraChange, x: T): DraChange => {
    const r = reason(x);
    return r === undefined ? c : { ...c, reason: r };
  };
  for (const [key, now] of Object.entries(after)) {
    const was = before[key];
    if (was === now) continue;
    if (was === undefined) {
      const first = Object.values(fields(now))[0]!;
      out.push(withReason({ kind, key, field: 'present', from: null, to: first }, now));
      continue;
    }
    const a = fields(was);
    const b = fields(now);
    for (const field of Object.keys(b) as (keyof F & string)[]) {
      if (a[field] === b[field]) continue;
      const change: DraChange = {
        kind,
        key,
        field: field as DraChange['field'],
        from: a[field]!,
        to: b[field]!,
      };
      out.push(field === 'health' || field === 'phase' ? withReason(change, now) : change);
    }
  }
  for (const key of Object.keys(before)) {
    if (!(key in after)) out.push({ kind, key, field: 'present', from: 'present', to: null });
  }
}

/** A change as one line of `watch`: `device gpu.plugboard.example/node-a/gpu-1: health Healthy → Unhealthy (drill)`. */
export function changeText(node: string, c: DraChange): string {
  const subject = `${node} ${c.kind} ${c.key}`;
  if (c.field === 'present') {
    if (c.to === null) return `${subject}: gone`;
    return `${subject}: new (${c.kind === 'claim' ? c.to : `health ${c.to}`})`;
  }
  const field = c.field === 'kubeletHealth' ? 'kubelet told' : c.field;
  const reason = c.reason ? ` (${c.reason})` : '';
  return `${subject}: ${field} ${c.from} → ${c.to}${reason}`;
}
