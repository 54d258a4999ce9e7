// One DRA device in the NUMA map, beside the device-plugin tiles and shaped like them: name, the
// API serving it ("DRA", in words), health as the driver says it and — when it differs — what the
// kubelet was told, the simulated fault's phase, taints by effect, what a partition takes of its
// counter set, a shared device's capacity used and left, the claim (and its share) → pods using it,
// and its fault switch. Memoised on its DraDeviceState object, so a one-device patch re-renders one tile.
import { memo } from 'react';
import type { DeviceFaultPhase, DraDeviceState } from '@plugboard/api';
import { describeAmounts, describeUsage, effectiveTaints, kubeletDisagrees } from '../../lib/dra-view';
import { HealthIcon, healthClass } from '../health-badge';
import { FaultPhaseBadge, FaultSwitch, SEP, type FaultControl } from './device-tile';

export interface DraDeviceTileProps {
  tileKey: string;
  device: DraDeviceState;
  /**
   * null: this gateway runs the driver (a fault goes through it, `device.fault`). Otherwise the fault
   * is a DeviceTaintRule and this is where it stands (null inside: none).
   */
  taintRule: { phase: DeviceFaultPhase | null } | null;
  faultControl: FaultControl;
  pending: boolean;
  /** Part of the selected pod's footprint. */
  highlighted?: boolean;
  onOpen: (tileKey: string) => void;
  onToggleFault: (tileKey: string) => void;
  /** Test hook: counts renders. */
  onRender?: (tileKey: string) => void;
}

/** The switch's accessible name: device names repeat across drivers and device plugins. */
export function draFaultSwitchName(d: Pick<DraDeviceState, 'name' | 'driver'>): string {
  return `Fault ${d.name} (DRA, ${d.driver})`;
}

function DraDeviceTileView({
  tileKey,
  device: d,
  taintRule,
  faultControl,
  pending,
  highlighted = false,
  onOpen,
  onToggleFault,
  onRender,
}: DraDeviceTileProps) {
  onRender?.(tileKey);
  const cls = healthClass(d.health);
  const taints = effectiveTaints(d);
  const phase = taintRule ? taintRule.phase : d.fault;
  const sep = SEP;
  const consumes = d.consumesCounters ?? [];
  const shared = Object.entries(d.sharedCapacity ?? {});
  return (
    <li
      className={`tile dra ${cls}${highlighted ? ' highlighted' : ''}`}
      data-device={d.name}
      data-dra={d.key}
    >
      <button type="button" className="open" aria-haspopup="dialog" onClick={() => onOpen(tileKey)}>
        <span className="id mono">{d.name}</span>
        {sep}
        <span className={`health ${cls}`}>
          <HealthIcon health={d.health} /> {d.health}
          <FaultPhaseBadge phase={d.fault} />
          {taintRule?.phase && (
            <>
              {sep}
              <span className="badge warn" style={{ marginLeft: '0.3em' }}>
                simulated: DeviceTaintRule
              </span>
            </>
          )}
        </span>
        {kubeletDisagrees(d) && (
          <>
            {sep}
            <span className="badge info">kubelet told {d.kubeletHealth}</span>
          </>
        )}
        {d.reason && d.health !== 'Healthy' && (
          <>
            {sep}
            <span className="pod">{d.reason}</span>
          </>
        )}
        {!d.published && (
          <>
            {sep}
            <span className="badge warn">not published yet</span>
          </>
        )}
        {taints.map((t) => (
          <span key={`${t.key}:${t.effect}:${t.source}`}>
            {sep}
            <span className={`badge ${t.effect === 'NoExecute' ? 'bad' : 'warn'}`}>taint {t.effect}</span>
          </span>
        ))}
        {consumes.map((c) => (
          <span key={c.counterSet}>
            {sep}
            <span className="pod">
              partition: takes {describeAmounts(c.counters)} of <span className="mono">{c.counterSet}</span>
            </span>
          </span>
        ))}
        {shared.map(([name, u]) => (
          <span key={name}>
            {sep}
            <span className="pod">shared: {describeUsage(name, u)}</span>
          </span>
        ))}
        {sep}
        <span className="pod">
          {d.allocations.length === 0 ? (
            'free'
          ) : (
            <>
              <span className="sr-only">used by </span>
              {d.allocations
                .map(
                  (a) =>
                    `claim ${a.claim}${a.consumedCapacity && Object.keys(a.consumedCapacity).length > 0 ? ` (${describeAmounts(a.consumedCapacity)})` : ''} → ${a.pods.length > 0 ? a.pods.join(', ') : 'no pod'}`,
                )
                .join('; ')}
            </>
          )}
        </span>
        {d.numaNodes.length > 1 && (
          <>
            {sep}
            <span className="pod">NUMA {d.numaNodes.join(', ')}</span>
          </>
        )}
        {sep}
        <span className="api">DRA</span>
        {highlighted && <span className="sr-only">, held by the selected pod</span>}
      </button>
      {faultControl.mode !== 'hidden' && (
        <FaultSwitch
          label={draFaultSwitchName(d)}
          phase={phase}
          pending={pending}
          faultControl={faultControl}
          onClick={() => onToggleFault(tileKey)}
          {...(taintRule ? { note: 'via a DeviceTaintRule' } : {})}
        />
      )}
    </li>
  );
}

export const DraDeviceTile = memo(
  DraDeviceTileView,
  (a, b) =>
    a.tileKey === b.tileKey &&
    a.device === b.device &&
    a.taintRule?.phase === b.taintRule?.phase &&
    (a.taintRule === null) === (b.taintRule === null) &&
    a.pending === b.pending &&
    a.highlighted === b.highlighted &&
    a.faultControl === b.faultControl &&
    a.onOpen === b.onOpen &&
    a.onToggleFault === b.onToggleFault &&
    a.onRender === b.onRender,
);
