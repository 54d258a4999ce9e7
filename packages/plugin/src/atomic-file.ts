// Writing a file so that a reader (a container runtime loading CDI specs, the driver reading its
// checkpoint after a crash) sees the old content or the new one, never half of it: write a temp
// file in the same directory, optionally fsync it, then rename it over the target.
import { randomUUID } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';

export async function writeFileAtomic(
  path: string,
  text: string,
  options: { mode?: number; fsync?: boolean } = {},
): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${randomUUID()}.tmp`;
  try {
    const file = await open(tmp, 'w', options.mode ?? 0o644);
    try {
      await file.writeFile(text);
      if (options.fsync) await file.sync();
    } finally {
      await file.close();
    }
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}
