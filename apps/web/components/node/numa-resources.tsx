// CPUs and memory of one NUMA node beside its devices: each CPU as a cell grouped by physical
// core (SMT siblings together), marked exclusive (held by a pod), reserved or shared, and each
// memory type as a bar of what pods pinned. The selected (or hovered) pod's CPUs and memory are
// highlighted, so its whole footprint — devices, CPUs, memory — shows on the map at once.
import { memo } from 'react';
import type { NumaResources } from '../../lib/placement-view';
import { formatBytes } from '../../lib/format';

export interface NumaResourcesProps {
  numaKey: string;
  model: NumaResources;
  /** The highlighted pod (its CPUs and memory are marked). */
  podKey: string | null;
  podCpus: ReadonlySet<number>;
}

export const NumaResourcesView = memo(function NumaResourcesView({
  numaKey,
  model,
  podKey,
  podCpus,
}: NumaResourcesProps) {
  if (model.cores.length === 0 && model.memory.length === 0) return null;
  const exclusive = model.cores.flat().filter((c) => c.owner !== null).length;
  const total = model.cores.flat().length;
  return (
    <div className="numa-resources">
      {total > 0 && (
        <>
          <p className="muted" style={{ margin: '0.2rem 0' }}>
            {exclusive} of {total} CPUs exclusive
            {podKey && podCpus.size > 0 && (
              <>
                {' '}
                · <span className="mono">{podKey}</span> holds{' '}
                {model.cores.flat().filter((c) => podCpus.has(c.id)).length} here
              </>
            )}
          </p>
          <ul className="cpu-grid" aria-label={`CPUs of NUMA node ${numaKey}`}>
            {model.cores.map((core) => (
              <li key={core[0]!.id} className="core">
                {core.map((cpu) => {
                  const mine = podCpus.has(cpu.id);
                  const state = cpu.owner
                    ? `exclusive to ${cpu.owner}`
                    : cpu.reserved
                      ? 'reserved'
                      : 'shared';
                  return (
                    <span
                      key={cpu.id}
                      className={`cpu${cpu.owner ? ' exclusive' : ''}${cpu.reserved ? ' reserved' : ''}${mine ? ' highlighted' : ''}`}
                      data-cpu={cpu.id}
                      title={`CPU ${cpu.id}: ${state}`}
                    >
                      {cpu.id}
                      <span className="sr-only">
                        , {state}
                        {mine ? ', held by the selected pod' : ''}
                      </span>
                    </span>
                  );
                })}
              </li>
            ))}
          </ul>
        </>
      )}
      {model.memory.map((m) => {
        const mine = podKey ? (m.byPod[podKey] ?? 0) : 0;
        const cap = Math.max(m.allocatable, m.pinned, 1);
        return (
          <div key={m.type} className="mem-row" data-memory={m.type}>
            <span className="muted">
              {m.type}: {formatBytes(m.pinned)} of {formatBytes(m.allocatable)} pinned
              {mine > 0 && (
                <>
                  {' '}
                  · <span className="mono">{podKey}</span> {formatBytes(mine)}
                </>
              )}
            </span>
            <span className="mem-bar" aria-hidden="true">
              <span className="pinned" style={{ width: `${((m.pinned - mine) / cap) * 100}%` }} />
              {mine > 0 && (
                <span className="pinned highlighted" style={{ width: `${(mine / cap) * 100}%` }} />
              )}
            </span>
          </div>
        );
      })}
    </div>
  );
});
