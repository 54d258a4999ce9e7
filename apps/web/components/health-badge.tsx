// Health as text + icon + colour: colour alone never carries the state.
import type { Health } from '@plugboard/api';

export function HealthIcon({ health }: { health: Health }) {
  return health === 'Healthy' ? (
    <svg aria-hidden="true" width="12" height="12" viewBox="0 0 12 12">
      <path d="M2 6.5 5 9.5 10 3" fill="none" stroke="currentColor" strokeWidth="2" />
    </svg>
  ) : (
    <svg aria-hidden="true" width="12" height="12" viewBox="0 0 12 12">
      <path d="M2.5 2.5 9.5 9.5M9.5 2.5 2.5 9.5" fill="none" stroke="currentColor" strokeWidth="2" />
    </svg>
  );
}

export function HealthBadge({ health }: { health: Health }) {
  return (
    <span className={`badge ${health === 'Healthy' ? 'ok' : 'bad'}`}>
      <HealthIcon health={health} />
      {health}
    </span>
  );
}

export function SimulatedBadge() {
  return (
    <span className="badge warn" title="Injected by Plugboard's fault overlay; the hardware is fine">
      simulated fault
    </span>
  );
}
