// Watching a directory for changes, the way both sides of the kubelet's plugin APIs need it: the
// kubelet's plugin watcher (plugins_registry), a plugin's restart watcher (its own sockets and
// kubelet.sock), a DRA driver's fault directory, a scanning device source. fs.watch is inotify on
// Linux, and inotify instances are a per-user limit shared by every program on the node
// (fs.inotify.max_user_instances, 128 by default); watches are another (max_user_watches). When
// fs.watch fails — at start (EMFILE, ENOSPC, ENOENT) or later through the watcher's 'error' event —
// the directory is polled instead (readdir and lstat, diffed every `pollMs`), the change is logged
// once with the reason, and `mode`/`reason` say so for status surfaces: nobody waits on an event
// that cannot come, and nobody is left guessing why a change took a poll interval to be seen.
import { watch as fsWatch } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

export type DirectoryWatchMode = 'watch' | 'poll';

/** The logger calls watchDirectory makes; a pino logger fits. */
export interface DirectoryWatchLogger {
  warn(fields: object, message: string): void;
}

/** An fs.FSWatcher, as far as watchDirectory uses it. */
export interface WatchHandle {
  close(): void;
  on(event: 'error', listener: (err: Error) => void): unknown;
}

/** fs.watch's shape, as far as watchDirectory uses it (injectable for tests). */
export type WatchFactory = (
  dir: string,
  options: { persistent: boolean },
  listener: (event: string, name: string | null) => void,
) => WatchHandle;

export interface WatchDirectoryOptions {
  /**
   * Poll interval once fs.watch is not available; null when the caller polls on its own anyway
   * (the fallback is then only logged and reported).
   */
  pollMs: number | null;
  logger?: DirectoryWatchLogger;
  /** Keep the process alive while watching (fs.watch's `persistent`, and the poll timer's ref). */
  persistent?: boolean;
  /** Defaults to fs.watch; tests inject a failing one. */
  watch?: WatchFactory;
  /** Called when the watch falls back to polling (once). */
  onModeChange?: (mode: DirectoryWatchMode, reason: string) => void;
}

export interface DirectoryWatch {
  readonly dir: string;
  readonly mode: DirectoryWatchMode;
  /** Why the directory is polled (null while fs.watch works). */
  readonly reason: string | null;
  close(): void;
}

/** Why fs.watch failed, in words an operator can act on. */
export function watchFailureReason(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  if (code === 'EMFILE')
    return `inotify instances exhausted (fs.inotify.max_user_instances) or too many open files: ${message}`;
  if (code === 'ENOSPC') return `inotify watches exhausted (fs.inotify.max_user_watches): ${message}`;
  if (code === 'ENOENT') return `directory does not exist (yet): ${message}`;
  return `fs.watch failed: ${message}`;
}

/** A directory entry's identity and content version: a change of any part is a change. */
async function entryKey(path: string): Promise<string | null> {
  try {
    const s = await lstat(path, { bigint: true });
    return `${s.ino}:${s.birthtimeNs}:${s.ctimeNs}:${s.mtimeNs}:${s.size}`;
  } catch {
    return null;
  }
}

async function listing(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return out;
  }
  for (const name of names) {
    const key = await entryKey(join(dir, name));
    if (key !== null) out.set(name, key);
  }
  return out;
}

class WatchedDirectory implements DirectoryWatch {
  mode: DirectoryWatchMode = 'watch';
  reason: string | null = null;
  #watcher: WatchHandle | null = null;
  #timer: NodeJS.Timeout | null = null;
  #last: Map<string, string> | null = null;
  #polling = false;
  #closed = false;

  constructor(
    readonly dir: string,
    private readonly onChange: (name: string | null) => void,
    private readonly o: WatchDirectoryOptions,
  ) {}

  start(): void {
    const persistent = this.o.persistent ?? false;
    try {
      const watcher = (this.o.watch ?? fsWatch)(this.dir, { persistent }, (_event, name) => {
        if (!this.#closed) this.onChange(name);
      });
      this.#watcher = watcher;
      watcher.on('error', (err) => this.#fallBack(err));
    } catch (err) {
      this.#fallBack(err);
    }
  }

  #fallBack(err: unknown): void {
    if (this.#closed || this.mode === 'poll') return;
    this.#watcher?.close();
    this.#watcher = null;
    this.mode = 'poll';
    this.reason = watchFailureReason(err);
    this.o.logger?.warn(
      { dir: this.dir, pollMs: this.o.pollMs, reason: this.reason },
      'directory watch unavailable: polling instead',
    );
    this.o.onModeChange?.('poll', this.reason);
    const pollMs = this.o.pollMs;
    if (pollMs === null) {
      // Not from inside watchDirectory(): the caller holds the handle (and its mode) first.
      queueMicrotask(() => {
        if (!this.#closed) this.onChange(null);
      });
      return;
    }
    void (async () => {
      // The baseline first, then one look at everything (a watch that failed later may have
      // missed events): a change after the baseline is found by the poll, one before it by the look.
      this.#last = await listing(this.dir);
      if (this.#closed) return;
      this.#timer = setInterval(() => void this.#poll(), pollMs);
      if (!(this.o.persistent ?? false)) this.#timer.unref();
      this.onChange(null);
    })();
  }

  async #poll(): Promise<void> {
    if (this.#polling || this.#closed) return;
    this.#polling = true;
    try {
      const next = await listing(this.dir);
      if (this.#closed) return;
      const last = this.#last ?? new Map<string, string>();
      this.#last = next;
      for (const [name, key] of next) if (last.get(name) !== key) this.onChange(name);
      for (const name of last.keys()) if (!next.has(name)) this.onChange(name);
    } finally {
      this.#polling = false;
    }
  }

  close(): void {
    this.#closed = true;
    this.#watcher?.close();
    this.#watcher = null;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }
}

/**
 * Calls `onChange(name)` for changes in `dir` (name null: something changed, look at everything).
 * fs.watch when it can; polling, logged and reported through `mode` and `reason`, when it cannot.
 */
export function watchDirectory(
  dir: string,
  onChange: (name: string | null) => void,
  options: WatchDirectoryOptions,
): DirectoryWatch {
  const watched = new WatchedDirectory(dir, onChange, options);
  watched.start();
  return watched;
}
