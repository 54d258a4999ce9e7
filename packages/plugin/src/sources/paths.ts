// Devices from glob patterns of device nodes (e.g. /dev/ttyUSB*, /dev/fuse): one device per match,
// ID = the node's file name, watched for add/remove.
import { dirname, basename } from 'node:path';
import { globPaths, isGlobSegment } from './glob.js';
import type { SourceDevice } from '../types.js';
import { naturalCompare } from './listeners.js';
import { ScanningSource, type ScanningWatchOptions } from './scanning.js';

export interface PathsSourceOptions extends ScanningWatchOptions {
  /** Absolute glob patterns of device nodes. */
  patterns: string[];
  /** Device nodes added to every device (e.g. a control node such as /dev/nvidiactl). */
  sharedDeviceNodes?: string[];
  /** NUMA nodes reported for every device (paths carry no topology). */
  numaNodes?: number[];
  /** Rescan interval; fs.watch also triggers rescans. 0 disables polling. */
  pollIntervalMs?: number;
}

export class PathsSource extends ScanningSource {
  readonly kind = 'paths';
  readonly #options: PathsSourceOptions;

  constructor(options: PathsSourceOptions) {
    super(options.pollIntervalMs ?? 2000, options);
    this.#options = options;
  }

  protected async scan(): Promise<SourceDevice[]> {
    const matches = (await Promise.all(this.#options.patterns.map(globPaths))).flat();
    const shared = this.#options.sharedDeviceNodes ?? [];
    return [...new Set(matches)].sort(naturalCompare).map((path) => ({
      id: basename(path),
      health: 'Healthy' as const,
      reason: null,
      numaNodes: this.#options.numaNodes ?? [],
      deviceNodes: [path, ...shared],
    }));
  }

  protected watchedDirs(): string[] {
    // The static directory in front of each pattern's first wildcard.
    const dirs = this.#options.patterns.map((pattern) => {
      let dir = dirname(pattern);
      while (dir.split('/').some(isGlobSegment)) dir = dirname(dir);
      return dir;
    });
    return [...new Set(dirs)];
  }
}
