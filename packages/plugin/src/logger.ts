// The process logger: JSON lines (pino) on stdout, one per process.
import { pino, type Logger, type LevelWithSilent } from 'pino';

export type LogLevel = LevelWithSilent;

export function createLogger(level: LogLevel = 'info', bindings: Record<string, string> = {}): Logger {
  return pino({ level, base: { ...bindings }, timestamp: pino.stdTimeFunctions.isoTime });
}
