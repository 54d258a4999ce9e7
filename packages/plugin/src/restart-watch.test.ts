import { after, afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once, EventEmitter } from 'node:events';
import { mkdtemp, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RestartWatcher, type RestartSignal, type RestartWatcherOptions } from './restart-watch.js';

describe('RestartWatcher', () => {
  let dir: string;
  let watcher: RestartWatcher | undefined;
  // The watcher's poll timer is unref'd (it must not keep a process alive); the test needs one.
  const keepAlive = setInterval(() => undefined, 1000);
  after(() => clearInterval(keepAlive));
  afterEach(async () => {
    watcher?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  async function setup(
    fsWatch: boolean,
    pollIntervalMs = 30,
    extra: Partial<RestartWatcherOptions> = {},
  ): Promise<EventEmitter<{ signal: [RestartSignal] }>> {
    dir = await mkdtemp(join(tmpdir(), 'pb-watch-'));
    await writeFile(join(dir, 'own.sock'), '');
    await writeFile(join(dir, 'kubelet.sock'), '');
    const events = new EventEmitter<{ signal: [RestartSignal] }>();
    watcher = new RestartWatcher({
      ownSockets: () => [join(dir, 'own.sock')],
      kubeletSocket: join(dir, 'kubelet.sock'),
      pollIntervalMs,
      fsWatch,
      onSignal: (s) => events.emit('signal', s),
      ...extra,
    });
    await watcher.start();
    return events;
  }

  for (const fsWatch of [true, false]) {
    const mode = fsWatch ? 'fs.watch + polling' : 'polling only (inotify missed the event)';
    it(`${mode}: own socket deleted → socket-deleted`, async () => {
      const events = await setup(fsWatch);
      const signal = once(events, 'signal');
      await unlink(join(dir, 'own.sock'));
      assert.deepEqual(await signal, ['socket-deleted']);
    });

    it(`${mode}: kubelet.sock replaced (new inode) → kubelet-sock-recreated`, async () => {
      const events = await setup(fsWatch);
      const signal = once(events, 'signal');
      // Create the new file before removing the old one so the inode cannot be reused.
      await writeFile(join(dir, 'kubelet.sock.new'), '');
      await rename(join(dir, 'kubelet.sock.new'), join(dir, 'kubelet.sock'));
      assert.deepEqual(await signal, ['kubelet-sock-recreated']);
    });

    it(`${mode}: kubelet.sock removed → kubelet-sock-removed, then back → kubelet-sock-appeared`, async () => {
      const events = await setup(fsWatch);
      const removed = once(events, 'signal');
      await unlink(join(dir, 'kubelet.sock'));
      assert.deepEqual(await removed, ['kubelet-sock-removed']);
      const appeared = once(events, 'signal');
      await writeFile(join(dir, 'kubelet.sock'), '');
      assert.deepEqual(await appeared, ['kubelet-sock-appeared']);
    });
  }

  it('fs.watch failing (inotify instances exhausted): polling alone signals, and the mode says so', async () => {
    const warnings: object[] = [];
    const events = await setup(true, 30, {
      watch: () => {
        throw Object.assign(new Error('EMFILE: too many open files, watch'), { code: 'EMFILE' });
      },
      logger: { warn: (fields) => void warnings.push(fields) },
    });
    assert.equal(watcher!.watchMode.mode, 'poll');
    assert.match(
      watcher!.watchMode.reason ?? '',
      /^inotify instances exhausted \(fs\.inotify\.max_user_instances\)/,
    );
    assert.equal(warnings.length, 1);
    const signal = once(events, 'signal');
    await unlink(join(dir, 'own.sock'));
    assert.deepEqual(await signal, ['socket-deleted']);
  });

  it('reports watch mode while fs.watch works', async () => {
    await setup(true);
    assert.deepEqual(watcher!.watchMode, { mode: 'watch', reason: null });
  });

  it('files other than the sockets (a checkpoint written beside dra.sock) start no check', async () => {
    const events = await setup(true, 60_000);
    for (let i = 0; i < 20; i++) {
      await writeFile(join(dir, `checkpoint.json.${i}.tmp`), '{}');
      await rename(join(dir, `checkpoint.json.${i}.tmp`), join(dir, 'checkpoint.json'));
    }
    // inotify delivers in order: once the socket's deletion is signalled, every event before it was seen.
    const signal = once(events, 'signal');
    await unlink(join(dir, 'own.sock'));
    assert.deepEqual(await signal, ['socket-deleted']);
    assert.ok(watcher!.checksRequested <= 2, `${watcher!.checksRequested} checks for one socket event`);
  });

  it('notices kubelet.sock deleted and created again even when the inode number is reused', async () => {
    const events = await setup(false);
    const signal = once(events, 'signal');
    await unlink(join(dir, 'kubelet.sock'));
    await writeFile(join(dir, 'kubelet.sock'), '');
    assert.deepEqual(await signal, ['kubelet-sock-recreated']);
  });

  it('a kubelet.sock remembered before registering is not a new kubelet', async () => {
    // Only the explicit checks below look (no fs.watch, no poll in between).
    const events = await setup(false, 60_000);
    const seen: RestartSignal[] = [];
    events.on('signal', (s) => seen.push(s));
    await unlink(join(dir, 'kubelet.sock'));
    await watcher!.check();
    // The new kubelet's socket, registered with before this watcher looked again.
    await writeFile(join(dir, 'kubelet.sock'), '');
    await watcher!.rememberKubeletSocket();
    await watcher!.check();
    assert.deepEqual(seen, ['kubelet-sock-removed']);
  });

  it('is silent while paused (our own re-bind) and after rememberOwnSockets', async () => {
    const events = await setup(false);
    const seen: RestartSignal[] = [];
    events.on('signal', (s) => seen.push(s));
    watcher!.pause();
    await unlink(join(dir, 'own.sock'));
    await writeFile(join(dir, 'own.sock'), '');
    await watcher!.rememberOwnSockets();
    watcher!.resume();
    await watcher!.check();
    assert.deepEqual(seen, []);
  });
});
