// The process logger: JSON lines (pino) on stdout, one per process. Lines are buffered and
// written in batches (flushed at least every FLUSH_MS and on `flushLogger`), because a write
// syscall per line costs more than the RPC it describes on a busy node.
import { pino, type Logger, type LevelWithSilent } from 'pino';

export type LogLevel = LevelWithSilent;

const FLUSH_MS = 250;
const BUFFER_BYTES = 4096;

export function createLogger(
  level: LogLevel = 'info',
  bindings: Record<string, string> = {},
  /** File descriptor or path; default stdout. */
  destination: number | string = 1,
): Logger {
  const stream = pino.destination({ dest: destination, sync: false, minLength: BUFFER_BYTES });
  const logger = pino({ level, base: { ...bindings }, timestamp: pino.stdTimeFunctions.isoTime }, stream);
  setInterval(() => logger.flush(), FLUSH_MS).unref();
  return logger;
}

/** Writes out buffered lines; call before the process exits. */
export function flushLogger(logger: Logger): Promise<void> {
  return new Promise((resolve) => logger.flush(() => resolve()));
}
