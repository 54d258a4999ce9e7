// One physical device in the NUMA map: ID, health (text + icon + colour), who uses it, replica
// count when shared, the API serving it ("device plugin", beside DRA tiles), and its fault switch. Memoised on the identity of its DeviceState objects so a
// one-device patch re-renders one tile out of a thousand.
import { memo, useId } from 'react';
import type { DeviceFaultPhase, DeviceState, Health, ResourceServedBy } from '@plugboard/api';
import { OBSERVED_NO_FAULT_REASON, SERVED_BY_LABEL, servedByOf } from '../../lib/node-view';
import { HealthIcon } from '../health-badge';

export type FaultControl =
  { mode: 'hidden' } | { mode: 'disabled'; reason: string; reasonId: string } | { mode: 'enabled' };

export interface DeviceTileProps {
  tileKey: string;
  id: string;
  devices: readonly DeviceState[];
  faultControl: FaultControl;
  pending: boolean;
  /** Part of the selected pod's footprint. */
  highlighted?: boolean;
  /** Held by a pod whose resources are spread over several NUMA nodes. */
  misaligned?: boolean;
  onOpen: (tileKey: string) => void;
  onToggleFault: (tileKey: string) => void;
  /** Test hook: counts renders. */
  onRender?: (tileKey: string) => void;
}

/** Screen-reader-only separator: a tile's accessible name is its visible text, comma-separated. */
export const SEP = <span className="sr-only">, </span>;

/**
 * A fault's phase beside the health, in words: "simulated fault" once the kubelet was told
 * Unhealthy, "fault pending: kubelet not told" while the gateway holds it and the kubelet does not
 * know yet (e.g. it is down). Shared by device-plugin and DRA tiles.
 */
export function FaultPhaseBadge({ phase }: { phase: DeviceFaultPhase | null }) {
  if (phase === null) return null;
  return (
    <>
      {SEP}
      <span className={phase === 'active' ? 'badge warn' : 'badge'} style={{ marginLeft: '0.3em' }}>
        {phase === 'active' ? 'simulated fault' : 'fault pending: kubelet not told'}
      </span>
    </>
  );
}

/** A tile's fault switch: checked while a fault holds the device; never flipped ahead of the stream. */
export function FaultSwitch({
  label,
  phase,
  pending,
  faultControl,
  onClick,
  note,
}: {
  label: string;
  phase: DeviceFaultPhase | null;
  /** A request is in flight or awaits the stream. */
  pending: boolean;
  faultControl: Exclude<FaultControl, { mode: 'hidden' }>;
  onClick: () => void;
  /** Said beside the switch, e.g. how the fault is made ("via a DeviceTaintRule"). */
  note?: string;
}) {
  return (
    <div className="fault-row">
      <button
        type="button"
        role="switch"
        className="switch"
        aria-checked={phase !== null}
        aria-label={label}
        aria-busy={pending}
        aria-describedby={faultControl.mode === 'disabled' ? faultControl.reasonId : undefined}
        disabled={faultControl.mode === 'disabled' || pending}
        onClick={onClick}
      >
        <span className="knob" aria-hidden="true" />
        {pending
          ? 'waiting…'
          : phase === 'pending'
            ? 'fault pending'
            : phase === 'active'
              ? 'fault on'
              : 'fault off'}
      </button>
      {note && <span className="muted"> {note}</span>}
    </div>
  );
}

/**
 * In place of a fault switch on a device nobody here can fault (another device plugin's): no
 * control, but the reason, reachable on hover and on keyboard focus (the button is described by it).
 */
export function NoFaultInfo({ servedBy, id }: { servedBy: Exclude<ResourceServedBy, 'plugin'>; id: string }) {
  const reasonId = useId();
  return (
    <div className="fault-row no-fault">
      <button type="button" className="info-button" aria-describedby={reasonId}>
        <span aria-hidden="true">ⓘ</span> no fault switch<span className="sr-only"> for {id}</span>
      </button>
      <span role="tooltip" id={reasonId} className="tooltip">
        {OBSERVED_NO_FAULT_REASON[servedBy]}
      </span>
    </div>
  );
}

function tileHealth(devices: readonly DeviceState[]): Health {
  return devices.some((d) => d.health !== 'Healthy') ? 'Unhealthy' : 'Healthy';
}

function DeviceTileView({
  tileKey,
  id,
  devices,
  faultControl,
  pending,
  highlighted = false,
  misaligned = false,
  onOpen,
  onToggleFault,
  onRender,
}: DeviceTileProps) {
  onRender?.(tileKey);
  const health = tileHealth(devices);
  // A fault holds the tile when it holds any replica; it is "on" only once the kubelet was told
  // Unhealthy about every one, "pending" while it was not told about one of them.
  const phase: DeviceFaultPhase | null = devices.some((d) => d.fault === 'pending')
    ? 'pending'
    : devices.some((d) => d.fault !== null)
      ? 'active'
      : null;
  const users = devices.flatMap((d) =>
    d.allocation ? [`${d.allocation.namespace}/${d.allocation.pod}`] : [],
  );
  const uniqueUsers = [...new Set(users)];
  const shared = devices.length > 1 || devices.some((d) => d.replicaOf !== null);
  const reason = devices.find((d) => d.health !== 'Healthy')?.reason ?? null;
  const numa = devices[0]?.numaNodes ?? [];
  const cls = health === 'Healthy' ? 'ok' : 'bad';
  const servedBy = devices[0] ? servedByOf(devices[0]) : 'plugin';
  // The accessible name comes from the visible text (plus screen-reader-only separators), so what
  // is read is what is shown: "gpu-0, Unhealthy, simulated fault, xid 79, used by ml/train".
  const sep = SEP;
  return (
    <li
      className={`tile ${cls}${highlighted ? ' highlighted' : ''}${misaligned ? ' misaligned' : ''}`}
      data-device={id}
    >
      <button type="button" className="open" aria-haspopup="dialog" onClick={() => onOpen(tileKey)}>
        <span className="id mono">{id}</span>
        {sep}
        <span className={`health ${cls}`}>
          <HealthIcon health={health} /> {health}
          <FaultPhaseBadge phase={phase} />
        </span>
        {reason && health !== 'Healthy' && (
          <>
            {sep}
            <span className="pod">{reason}</span>
          </>
        )}
        {sep}
        <span className="pod">
          {uniqueUsers.length === 0 ? (
            'free'
          ) : (
            <>
              <span className="sr-only">used by </span>
              {uniqueUsers.join(', ')}
            </>
          )}
          {shared && ` · ${users.length}/${devices.length} replicas in use`}
        </span>
        {misaligned && (
          <>
            {sep}
            <span className="badge warn">! pod spread over NUMA nodes</span>
          </>
        )}
        {numa.length > 1 && (
          <>
            {sep}
            <span className="pod">NUMA {numa.join(', ')}</span>
          </>
        )}
        {sep}
        <span className="api" data-served-by={servedBy}>
          {servedBy === 'plugin' ? 'device plugin' : SERVED_BY_LABEL[servedBy]}
        </span>
        {highlighted && <span className="sr-only">, held by the selected pod</span>}
      </button>
      {faultControl.mode !== 'hidden' && servedBy !== 'plugin' && <NoFaultInfo servedBy={servedBy} id={id} />}
      {faultControl.mode !== 'hidden' && servedBy === 'plugin' && (
        <FaultSwitch
          label={`Fault ${id}`}
          phase={phase}
          pending={pending}
          faultControl={faultControl}
          onClick={() => onToggleFault(tileKey)}
        />
      )}
    </li>
  );
}

function sameDevices(a: readonly DeviceState[], b: readonly DeviceState[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

export const DeviceTile = memo(
  DeviceTileView,
  (a, b) =>
    a.tileKey === b.tileKey &&
    a.id === b.id &&
    a.pending === b.pending &&
    a.highlighted === b.highlighted &&
    a.misaligned === b.misaligned &&
    a.faultControl === b.faultControl &&
    a.onOpen === b.onOpen &&
    a.onToggleFault === b.onToggleFault &&
    a.onRender === b.onRender &&
    sameDevices(a.devices, b.devices),
);
