// Health as text + icon + colour: colour alone never carries the state. DRA adds 'Unknown' (a
// driver may say it does not know), shown as a question mark in the warning colour.
import type { DraHealth, Health } from '@plugboard/api';

export function healthClass(health: Health | DraHealth): 'ok' | 'bad' | 'warn' {
  return health === 'Healthy' ? 'ok' : health === 'Unhealthy' ? 'bad' : 'warn';
}

export function HealthIcon({ health }: { health: Health | DraHealth }) {
  if (health === 'Healthy') {
    return (
      <svg aria-hidden="true" width="12" height="12" viewBox="0 0 12 12">
        <path d="M2 6.5 5 9.5 10 3" fill="none" stroke="currentColor" strokeWidth="2" />
      </svg>
    );
  }
  if (health === 'Unknown') {
    return (
      <svg aria-hidden="true" width="12" height="12" viewBox="0 0 12 12">
        <path
          d="M3.5 4a2.5 2.5 0 1 1 3.5 2.3c-.7.3-1 .8-1 1.5V8.5M6 10v.5"
          fill="none"
          stroke="currentColor"
          strokeWidth="1.6"
        />
      </svg>
    );
  }
  return (
    <svg aria-hidden="true" width="12" height="12" viewBox="0 0 12 12">
      <path d="M2.5 2.5 9.5 9.5M9.5 2.5 2.5 9.5" fill="none" stroke="currentColor" strokeWidth="2" />
    </svg>
  );
}

export function HealthBadge({ health }: { health: Health | DraHealth }) {
  return (
    <span className={`badge ${healthClass(health)}`}>
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
