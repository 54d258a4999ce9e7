// Writing a file so that a reader (a container runtime loading CDI specs, the driver reading its
// checkpoint after a crash) sees the old content or the new one, never half of it: write a temp
// file in the same directory, optionally fsync it, then rename it over the target.
//
// Only the fsync leaves the main thread. Opening, writing a few kB into the page cache, closing and
// renaming take microseconds each, less than handing each to libuv's thread pool and back: as six
// promise steps a DRA prepare's two files cost eleven thread-pool round trips, each waiting for a
// CPU on a loaded node (docs/benchmarks/dra.md). The directory is made only when it is missing.
import { randomUUID } from 'node:crypto';
import { closeSync, fsync, mkdirSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { promisify } from 'node:util';

const fsyncFd = promisify(fsync);

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
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}
