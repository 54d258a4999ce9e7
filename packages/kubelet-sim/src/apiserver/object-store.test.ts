// The object store's watch history: replay from a resourceVersion, selector transitions,
// 410 for compacted versions, and the cap on stored objects.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ObjectStore, ResourceVersionClock, type KubeObject, type WatchEvent } from './object-store.js';
import { parseLabelSelector } from './selectors.js';

const obj = (
  name: string,
  labels: Record<string, string> = {},
  extra: Record<string, unknown> = {},
): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', uid: name, creationTimestamp: '', labels },
  ...extra,
});

test('the object store replays, filters transitions and expires compacted versions', () => {
  const clock = new ResourceVersionClock();
  const store = new ObjectStore('Pod', 'PodList', true, clock, 3);
  const a = store.upsert(obj('a', { app: 'x' }));
  assert.equal(a.metadata.resourceVersion, '1');
  assert.equal(store.upsert(obj('a', { app: 'x' })), a, 'an unchanged object keeps its version');
  store.upsert(obj('a', { app: 'y' })); // rv 2: leaves app=x
  store.upsert(obj('b', { app: 'x' })); // rv 3
  const seen: WatchEvent[] = [];
  const w = store.watch(1, parseLabelSelector('app=x'), (e) => seen.push(e));
  assert.ok(w.ok);
  assert.deepEqual(
    seen.map((e) => [e.type, (e.object as KubeObject).metadata.name]),
    [
      ['DELETED', 'a'],
      ['ADDED', 'b'],
    ],
  );
  store.delete('default', 'b'); // rv 4 → history keeps 2..4
  assert.deepEqual(seen.at(-1)?.type, 'DELETED');
  const expired = store.watch(
    0,
    () => true,
    () => undefined,
  );
  assert.equal(expired.ok, false);
  assert.equal(!expired.ok && expired.code, 410);
  assert.ok(
    store.watch(
      1,
      () => true,
      () => undefined,
    ).ok,
    'rv 1 is still covered (events after it are kept)',
  );
});

test('a capped store deletes the least recently changed object', () => {
  const store = new ObjectStore('Event', 'EventList', true, new ResourceVersionClock(), 100, 2);
  store.upsert(obj('a'));
  store.upsert(obj('b'));
  store.upsert(obj('a', { touched: 'yes' }));
  const deleted: string[] = [];
  store.watch(
    null,
    () => true,
    (e) => e.type === 'DELETED' && deleted.push((e.object as KubeObject).metadata.name),
  );
  store.upsert(obj('c'));
  assert.deepEqual(deleted, ['b']);
  assert.deepEqual(
    store.list(() => true).items.map((o) => o.metadata.name),
    ['a', 'c'],
  );
});
