// Keeps a CDI spec file (<specDir>/<vendor>-<class>.json) in sync with a resource's physical
// devices, so runtimes with CDI enabled can resolve the names Allocate returns. Written atomically
// (temp file + rename) so a runtime never reads half a file.
import { join } from 'node:path';
import { writeFileAtomic } from './atomic-file.js';
import { PluginError } from './errors.js';
import type { PluginDevice } from './types.js';

export const CDI_VERSION = '0.6.0';
export const DEFAULT_CDI_SPEC_DIR = '/var/run/cdi';

export interface CdiContainerEdits {
  env: string[];
  deviceNodes?: { path: string }[];
}

export interface CdiSpec {
  cdiVersion: string;
  kind: string;
  devices: { name: string; containerEdits: CdiContainerEdits }[];
}

export function cdiSpec(vendor: string, klass: string, devices: readonly PluginDevice[]): CdiSpec {
  const physical = new Map<string, PluginDevice>();
  for (const d of devices) if (!physical.has(d.replicaOf ?? d.id)) physical.set(d.replicaOf ?? d.id, d);
  return {
    cdiVersion: CDI_VERSION,
    kind: `${vendor}/${klass}`,
    devices: [...physical].map(([id, d]) => ({
      name: id,
      containerEdits: {
        env: [`PLUGBOARD_CDI_DEVICE=${id}`],
        ...(d.deviceNodes.length ? { deviceNodes: d.deviceNodes.map((path) => ({ path })) } : {}),
      },
    })),
  };
}

export function cdiSpecPath(specDir: string, vendor: string, klass: string): string {
  return join(specDir, `${vendor}-${klass}.json`);
}

export async function writeCdiSpec(
  specDir: string,
  vendor: string,
  klass: string,
  devices: readonly PluginDevice[],
): Promise<string> {
  const path = cdiSpecPath(specDir, vendor, klass);
  try {
    await writeFileAtomic(path, JSON.stringify(cdiSpec(vendor, klass, devices), null, 2) + '\n');
  } catch (err) {
    throw new PluginError('internal', `cannot write CDI spec ${path}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  return path;
}

/**
 * One resource's CDI spec kept in step with its device list. Writes are chained and each reads the
 * list when it runs, so the newest device list always lands last.
 */
export class CdiSpecSync {
  readonly #specDir: string;
  readonly #vendor: string;
  readonly #class: string;
  readonly #devices: () => readonly PluginDevice[];
  #write: Promise<void> = Promise.resolve();

  constructor(
    spec: { specDir?: string; vendor: string; class: string },
    devices: () => readonly PluginDevice[],
  ) {
    this.#specDir = spec.specDir ?? DEFAULT_CDI_SPEC_DIR;
    this.#vendor = spec.vendor;
    this.#class = spec.class;
    this.#devices = devices;
  }

  /** Writes the spec of the device list as it is when this write's turn comes. */
  sync(): Promise<void> {
    const next = this.#write
      .catch(() => undefined)
      .then(() => writeCdiSpec(this.#specDir, this.#vendor, this.#class, this.#devices()))
      .then(() => undefined);
    this.#write = next;
    return next;
  }

  /** Resolves when the writes asked for so far are done, failed or not. */
  settled(): Promise<void> {
    return this.#write.catch(() => undefined);
  }
}
