// Writing a file so that a reader (a container runtime loading CDI specs, the driver reading its
// checkpoint after a crash) sees the old content or the new one, never half of it: write a temp
// file in the same directory, optionally fsync it, then rename it over the target.
//
// Only the fsync, and the rename after it, leave the main thread. Opening, writing a few kB into the
// page cache, closing and renaming take microseconds each, less than handing each to libuv's thread
// pool and back: as six promise steps a DRA prepare's two files cost eleven thread-pool round trips,
// each waiting for a CPU on a loaded node (docs/benchmarks/dra.md). A rename right after an fsync
// is the exception: it waits for the journal the fsync just committed to (0.5 ms a call on this
// thread in the DRA benchmark), so it goes to the pool too. The directory is made only when missing.
import { randomUUID } from 'node:crypto';
import { closeSync, fsync, mkdirSync, openSync, rename, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { promisify } from 'node:util';

const fsyncFd = promisify(fsync);
const renameInPool = promisify(rename);

function openForWrite(path: string, mode: number): number {
  try {
    return openSync(path, 'w', mode);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    mkdirSync(dirname(path), { recursive: true });
    return openSync(path, 'w', mode);
  }
}

export async function writeFileAtomic(
  path: string,
  text: string,
  options: { mode?: number; fsync?: boolean } = {},
): Promise<void> {
  const tmp = `${path}.${randomUUID()}.tmp`;
  try {
    const fd = openForWrite(tmp, options.mode ?? 0o644);
    try {
      writeFileSync(fd, text);
      if (options.fsync) await fsyncFd(fd);
    } finally {
      closeSync(fd);
    }
    if (options.fsync) await renameInPool(tmp, path);
    else renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}
