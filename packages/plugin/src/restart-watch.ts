// Notices a kubelet restart from the filesystem: the kubelet deletes every socket in the
// device-plugin directory when it starts, then creates a new kubelet.sock. Also notices kubelet.sock
// going away (a kubelet stopping). fs.watch gives a fast signal; a polling fallback covers hostPath
// mounts where inotify misses events. Only events naming a watched socket (or naming nothing) start
// a check: a DRA driver's checkpoint sits beside its dra.sock, and every prepare and unprepare
// writes it (a temporary file, then a rename). Where fs.watch is unavailable (inotify instances
// exhausted) the poll alone carries on; `watchMode` and a log line say so.
import { stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import {
  watchDirectory,
  type DirectoryWatch,
  type DirectoryWatchLogger,
  type DirectoryWatchMode,
  type WatchFactory,
} from '@plugboard/proto';
import { ScanningSource } from './sources/scanning.js';
import type { DeviceSource, FileWatchState } from './types.js';

export type RestartSignal =
  'socket-deleted' | 'kubelet-sock-recreated' | 'kubelet-sock-appeared' | 'kubelet-sock-removed';

export interface RestartWatcherOptions {
  /** Our own sockets: any of them missing or replaced means the kubelet cleaned the directory. */
  ownSockets: () => readonly string[];
  /** The kubelet's Registration socket, or null when not watched (plugin-watcher mode). */
  kubeletSocket: string | null;
  pollIntervalMs: number;
  /** Use fs.watch besides polling (default true); false = polling only. */
  fsWatch?: boolean;
  /** fs.watch unless a test injects a failing one. */
  watch?: WatchFactory;
  /** Where a watch that falls back to polling is reported. */
  logger?: DirectoryWatchLogger;
  onSignal: (signal: RestartSignal) => void;
}

/**
 * Identity of a file: inode plus birth and change times in nanoseconds. The inode alone is not
 * enough: ext4 and overlayfs reuse a freed inode number at once, so a socket deleted and created
 * again can come back with the same inode.
 */
async function identity(path: string): Promise<string | null> {
  try {
    const s = await stat(path, { bigint: true });
    return `${s.ino}:${s.birthtimeNs}:${s.ctimeNs}`;
  } catch {
    return null;
  }
}

export class RestartWatcher {
  readonly #options: RestartWatcherOptions;
  readonly #own = new Map<string, string>();
  #kubeletId: string | null = null;
  #watchers: DirectoryWatch[] = [];
  #timer: NodeJS.Timeout | null = null;
  #checking = false;
  #recheck = false;
  #paused = 0;
  #requested = 0;

  constructor(options: RestartWatcherOptions) {
    this.#options = options;
  }

  /** Records the current inodes (after serving) and starts watching. */
  async start(): Promise<void> {
    await this.rememberOwnSockets();
    if (this.#options.kubeletSocket) this.#kubeletId = await identity(this.#options.kubeletSocket);
    const dirs = new Set(
      [
        ...this.#options.ownSockets(),
        ...(this.#options.kubeletSocket ? [this.#options.kubeletSocket] : []),
      ].map((p) => dirname(p)),
    );
    const watched = (name: string | null): boolean =>
      name === null ||
      [...this.#options.ownSockets(), this.#options.kubeletSocket].some(
        (p) => p !== null && basename(p) === name,
      );
    for (const dir of this.#options.fsWatch === false ? [] : dirs) {
      // The poll below runs in every mode: a failed watch needs no poll of its own.
      this.#watchers.push(
        watchDirectory(
          dir,
          (name) => {
            if (watched(name)) void this.check();
          },
          {
            pollMs: null,
            ...(this.#options.watch ? { watch: this.#options.watch } : {}),
            ...(this.#options.logger ? { logger: this.#options.logger } : {}),
          },
        ),
      );
    }
    this.#timer = setInterval(() => void this.check(), this.#options.pollIntervalMs);
    this.#timer.unref();
  }

  /**
   * `watch` while every directory has fs.watch besides the poll; `poll` (with the reason) when one
   * has only the poll — fs.watch failed or was turned off.
   */
  get watchMode(): { mode: DirectoryWatchMode; reason: string | null } {
    if (this.#options.fsWatch === false) return { mode: 'poll', reason: 'fs.watch turned off' };
    const failed = this.#watchers.find((w) => w.mode === 'poll');
    return failed ? { mode: 'poll', reason: failed.reason } : { mode: 'watch', reason: null };
  }

  /** Call after (re-)binding: the new sockets are ours. */
  async rememberOwnSockets(): Promise<void> {
    this.#own.clear();
    for (const path of this.#options.ownSockets()) {
      const id = await identity(path);
      if (id !== null) this.#own.set(path, id);
    }
  }

  /**
   * Call before registering: the kubelet behind the kubelet.sock there now is the one registered
   * with, so only a later change of it is a new kubelet. Without this, a watcher whose last look
   * fell between the old socket's removal and the new one's creation would report the new socket
   * as appearing once the plugin had already registered with it: a second restart that is not one.
   */
  async rememberKubeletSocket(): Promise<void> {
    if (this.#options.kubeletSocket) this.#kubeletId = await identity(this.#options.kubeletSocket);
  }

  /** While paused (we are re-binding our own sockets) changes are not signals. */
  pause(): void {
    this.#paused++;
  }

  resume(): void {
    this.#paused = Math.max(0, this.#paused - 1);
  }

  /** How many checks were asked for (by events, polls and callers), coalesced or not. */
  get checksRequested(): number {
    return this.#requested;
  }

  async check(): Promise<void> {
    this.#requested++;
    if (this.#checking) {
      this.#recheck = true;
      return;
    }
    this.#checking = true;
    try {
      do {
        this.#recheck = false;
        await this.#checkOnce();
      } while (this.#recheck);
    } finally {
      this.#checking = false;
    }
  }

  async #checkOnce(): Promise<void> {
    if (this.#paused > 0) return;
    let signal: RestartSignal | null = null;
    for (const [path, id] of this.#own) {
      if ((await identity(path)) !== id) {
        signal = 'socket-deleted';
        break;
      }
    }
    if (this.#options.kubeletSocket) {
      const now = await identity(this.#options.kubeletSocket);
      const before = this.#kubeletId;
      this.#kubeletId = now;
      if (signal === null && now !== null && now !== before) {
        signal = before === null ? 'kubelet-sock-appeared' : 'kubelet-sock-recreated';
      } else if (signal === null && now === null && before !== null) {
        signal = 'kubelet-sock-removed';
      }
    }
    if (signal !== null && this.#paused === 0) this.#options.onSignal(signal);
  }

  stop(): void {
    for (const w of this.#watchers) w.close();
    this.#watchers = [];
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }
}

/**
 * How a plugin follows the filesystem: the restart watcher's directories, then a scanning device
 * source's; the first one polled alone (fs.watch failed) is the answer.
 */
export function fileWatchOf(restart: RestartWatcher, source: DeviceSource): FileWatchState {
  const own = restart.watchMode;
  if (own.mode === 'poll' || !(source instanceof ScanningSource)) return own;
  return source.watchMode;
}
