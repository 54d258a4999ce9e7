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
});
