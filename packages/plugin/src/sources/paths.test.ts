import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { EventEmitter } from 'node:events';
import { mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PathsSource } from './paths.js';

describe('PathsSource', () => {
  let dir: string;
  let source: PathsSource | undefined;
  after(async () => {
    await source?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('one device per matching node, natural order, watched for add and remove', async () => {
    dir = await mkdtemp(join(tmpdir(), 'pb-paths-'));
    for (const name of ['ttyUSB10', 'ttyUSB2', 'ttyS0']) await writeFile(join(dir, name), '');
    source = new PathsSource({
      patterns: [join(dir, 'ttyUSB*')],
      sharedDeviceNodes: ['/dev/null'],
      pollIntervalMs: 100,
    });
    await source.start();
    assert.deepEqual(
      source.list().map((d) => d.id),
      ['ttyUSB2', 'ttyUSB10'],
    );
    assert.deepEqual(source.list()[0]!.deviceNodes, [join(dir, 'ttyUSB2'), '/dev/null']);

    const changes = new EventEmitter();
    source.subscribe(() => changes.emit('change'));
    let changed = once(changes, 'change');
    await writeFile(join(dir, 'ttyUSB3'), '');
    await changed;
    assert.deepEqual(
      source.list().map((d) => d.id),
      ['ttyUSB2', 'ttyUSB3', 'ttyUSB10'],
    );

    changed = once(changes, 'change');
    await unlink(join(dir, 'ttyUSB2'));
    await changed;
    assert.deepEqual(
      source.list().map((d) => d.id),
      ['ttyUSB3', 'ttyUSB10'],
    );
  });

  it('matches real character devices', async () => {
    const dev = new PathsSource({ patterns: ['/dev/nul[l]'], pollIntervalMs: 0 });
    await dev.start();
    assert.deepEqual(
      dev.list().map((d) => d.deviceNodes),
      [['/dev/null']],
    );
    await dev.stop();
  });

  it('without inotify (and with its own polling off) polls the directory anyway, and says so', async () => {
    await source?.stop();
    await rm(dir, { recursive: true, force: true });
    dir = await mkdtemp(join(tmpdir(), 'pb-paths-'));
    // The fallback poll's timer is unref'd (it must not keep a plugin alive); the test needs one.
    const keepAlive = setInterval(() => undefined, 1000);
    after(() => clearInterval(keepAlive));
    const warnings: object[] = [];
    source = new PathsSource({
      patterns: [join(dir, 'ttyUSB*')],
      pollIntervalMs: 0,
      watch: () => {
        throw Object.assign(new Error('EMFILE: too many open files, watch'), { code: 'EMFILE' });
      },
      logger: { warn: (fields) => void warnings.push(fields) },
    });
    await source.start();
    assert.equal(source.watchMode.mode, 'poll');
    assert.match(source.watchMode.reason ?? '', /^inotify instances exhausted/);
    assert.equal(warnings.length, 1);
    const changes = new EventEmitter();
    source.subscribe(() => changes.emit('change'));
    const changed = once(changes, 'change');
    await writeFile(join(dir, 'ttyUSB0'), '');
    await changed;
    assert.deepEqual(
      source.list().map((d) => d.id),
      ['ttyUSB0'],
    );
  });
});
