// Restoring the faults a previous run left active (their TTLs respected: expired ones are cleared,
// the rest re-applied through the plugins' fault overlay), with the log lines that say so.
import type { Logger } from 'pino';
import type { FaultActuator, FaultStore } from './fault-store.js';

export function restorePersistedFaults(faults: FaultStore, actuator: FaultActuator, logger: Logger): void {
  const persisted = faults.loadPersisted();
  if (persisted.error) logger.warn({ error: persisted.error }, 'cannot restore persisted faults');
  faults.attach(actuator, persisted.restored, persisted.expired);
  if (persisted.restored.length || persisted.expired.length) {
    logger.info(
      { restored: persisted.restored.length, expired: persisted.expired.length },
      'persisted faults restored',
    );
  }
}
