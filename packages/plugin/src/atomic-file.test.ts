import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomic } from './atomic-file.js';

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'pb-atomic-'));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('writeFileAtomic', () => {
  it('makes a missing directory, then replaces the file whole, with and without fsync', () =>
    withDir(async (dir) => {
      const path = join(dir, 'a', 'b', 'state.json');
      await writeFileAtomic(path, '{"v":1}\n', { fsync: true, mode: 0o600 });
      assert.equal(await readFile(path, 'utf8'), '{"v":1}\n');
      assert.equal((await stat(path)).mode & 0o777, 0o600);
      await writeFileAtomic(path, '{"v":2}\n');
      assert.equal(await readFile(path, 'utf8'), '{"v":2}\n');
      assert.deepEqual(await readdir(join(dir, 'a', 'b')), ['state.json']);
    }));

  it('leaves no temporary file when the rename fails', () =>
    withDir(async (dir) => {
      // A non-empty directory where the file should go: the rename over it fails.
      await mkdir(join(dir, 'taken', 'inside'), { recursive: true });
      for (const fsync of [true, false]) {
        await assert.rejects(writeFileAtomic(join(dir, 'taken'), 'x', { fsync }));
      }
      assert.deepEqual(await readdir(dir), ['taken']);
    }));
});
