// What the gateway started, to stop in reverse order: each step runs even when an earlier one
// failed (the failure is logged), and a second stop finds nothing left to do.
import type { Logger } from 'pino';

export type Cleanup = () => Promise<void> | void;

export class Cleanups {
  private readonly steps: Cleanup[] = [];

  constructor(private readonly logger: Logger) {}

  push(step: Cleanup): void {
    this.steps.push(step);
  }

  readonly stopAll = async (): Promise<void> => {
    for (const fn of this.steps.splice(0).reverse()) {
      try {
        await fn();
      } catch (err) {
        this.logger.warn({ err }, 'error while stopping');
      }
    }
  };
}
