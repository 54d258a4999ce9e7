// The kubelet's checkpoint manager (pkg/kubelet/checkpointmanager, release-1.33): checkpoints are
// files in one directory, named by their key, written atomically (a temporary file renamed over
// the old one, as utilstore's FileStore does) so a reader sees the old checkpoint or the new one,
// never half of one. Encoding and checksums belong to each checkpoint's owner.

import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface CheckpointManager {
  /** CreateCheckpoint: stores `data` under `key`, replacing the previous checkpoint atomically. */
  createCheckpoint(key: string, data: string): Promise<void>;
  /** GetCheckpoint: the stored data; null when there is none (ErrCheckpointNotFound). */
  getCheckpoint(key: string): Promise<string | null>;
}

export function newCheckpointManager(dir: string): CheckpointManager {
  return {
    async createCheckpoint(key, data) {
      const path = join(dir, key);
      await writeFile(`${path}.tmp`, data, { mode: 0o600 });
      await rename(`${path}.tmp`, path);
    },
    async getCheckpoint(key) {
      try {
        return await readFile(join(dir, key), 'utf8');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw err;
      }
    },
  };
}
