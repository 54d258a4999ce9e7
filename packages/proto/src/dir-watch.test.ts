import assert from 'node:assert/strict';
import { once, EventEmitter } from 'node:events';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { watchDirectory, watchFailureReason, type WatchFactory } from './dir-watch.js';

function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: watch failed`), { code });
}

/** A watch factory that throws at once, as fs.watch does with every inotify instance taken. */
const throwing =
  (code: string): WatchFactory =>
  () => {
    throw errno(code);
  };

function recordingLogger() {
  const lines: { fields: object; message: string }[] = [];
  return { lines, warn: (fields: object, message: string) => void lines.push({ fields, message }) };
}

/** Resolves with the first name passed to onChange that satisfies `want`. */
function changes() {
  const events = new EventEmitter<{ change: [name: string | null] }>();
  return {
    onChange: (name: string | null) => void events.emit('change', name),
    next: async (want: (name: string | null) => boolean) => {
      for (;;) {
        const [name] = (await once(events, 'change')) as [string | null];
        if (want(name)) return name;
      }
    },
  };
}

describe('watchDirectory', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dir-watch-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('uses fs.watch when it can', async () => {
    const c = changes();
    const w = watchDirectory(dir, c.onChange, { pollMs: 60_000 });
    try {
      assert.equal(w.mode, 'watch');
      assert.equal(w.reason, null);
      const seen = c.next((n) => n === 'a');
      await writeFile(join(dir, 'a'), 'x');
      assert.equal(await seen, 'a');
    } finally {
      w.close();
    }
  });

  for (const code of ['EMFILE', 'ENOSPC', 'EPERM']) {
    it(`polls when fs.watch throws ${code} at start, logs once and says why`, async () => {
      const logger = recordingLogger();
      const c = changes();
      const w = watchDirectory(dir, c.onChange, {
        pollMs: 20,
        persistent: true,
        logger,
        watch: throwing(code),
      });
      try {
        assert.equal(w.mode, 'poll');
        assert.equal(w.reason, watchFailureReason(errno(code)));
        // The baseline is taken, then one look at everything.
        assert.equal(await c.next(() => true), null);
        const name = `${code}-created`;
        const created = c.next((n) => n === name);
        await writeFile(join(dir, name), 'x');
        assert.equal(await created, name);
        const removed = c.next((n) => n === name);
        await rm(join(dir, name));
        assert.equal(await removed, name);
        assert.equal(logger.lines.length, 1);
        assert.equal(logger.lines[0]!.message, 'directory watch unavailable: polling instead');
        assert.deepEqual(logger.lines[0]!.fields, { dir, pollMs: 20, reason: w.reason });
      } finally {
        w.close();
      }
    });
  }

  it('names the inotify limits in the reason', () => {
    assert.match(
      watchFailureReason(errno('EMFILE')),
      /^inotify instances exhausted \(fs\.inotify\.max_user_instances\)/,
    );
    assert.match(
      watchFailureReason(errno('ENOSPC')),
      /^inotify watches exhausted \(fs\.inotify\.max_user_watches\)/,
    );
  });

  it("falls back to polling when the watcher reports an 'error' later", async () => {
    const fake = new EventEmitter() as EventEmitter & { close(): void };
    let closed = false;
    fake.close = () => void (closed = true);
    const logger = recordingLogger();
    const modes: string[] = [];
    const c = changes();
    const w = watchDirectory(dir, c.onChange, {
      pollMs: 20,
      persistent: true,
      logger,
      watch: () => fake,
      onModeChange: (mode, reason) => modes.push(`${mode}: ${reason}`),
    });
    try {
      assert.equal(w.mode, 'watch');
      fake.emit('error', errno('EMFILE'));
      assert.equal(w.mode, 'poll');
      assert.ok(closed, 'the failed watcher is closed');
      assert.deepEqual(modes, [`poll: ${w.reason}`]);
      assert.equal(await c.next(() => true), null);
      const changed = c.next((n) => n === 'later');
      await writeFile(join(dir, 'later'), 'x');
      assert.equal(await changed, 'later');
      fake.emit('error', errno('EMFILE'));
      assert.equal(logger.lines.length, 1, 'logged once');
    } finally {
      w.close();
    }
  });

  it('polls a directory that does not exist yet and sees it appear', async () => {
    const missing = join(dir, 'missing');
    const c = changes();
    const w = watchDirectory(missing, c.onChange, { pollMs: 20, persistent: true });
    try {
      assert.equal(w.mode, 'poll');
      assert.match(w.reason ?? '', /does not exist/);
      assert.equal(await c.next(() => true), null);
      const seen = c.next((n) => n === 'dev0');
      await mkdir(missing);
      await writeFile(join(missing, 'dev0'), '');
      assert.equal(await seen, 'dev0');
    } finally {
      w.close();
    }
  });
});
