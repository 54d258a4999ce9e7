import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import { ObjectStore, ResourceVersionClock, type KubeObject } from '../apiserver/object-store.js';
import { microTime, NODE_LEASE_RENEW_INTERVAL_MS, NodeLeaseController } from './lease-controller.js';

test('the node lease is held by the node, owned by the Node, and renewed on every interval', async () => {
  assert.equal(NODE_LEASE_RENEW_INTERVAL_MS, 10_000, 'a quarter of the 40 s lease, as the kubelet');
  const store = new ObjectStore(
    'Lease',
    'LeaseList',
    true,
    new ResourceVersionClock(),
    100,
    Infinity,
    'coordination.k8s.io/v1',
  );
  const changes = new EventEmitter();
  store.watch(
    null,
    () => true,
    (e) => changes.emit(e.type, e.object),
  );
  const lease = new NodeLeaseController({ store, nodeName: 'n1', nodeUid: 'uid-1', renewIntervalMs: 20 });
  lease.start();
  // The controller's timer is unref'd (it never holds a process open); the test holds the loop.
  const keepAlive = setInterval(() => undefined, 1000);
  try {
    const first = store.get('kube-node-lease', 'n1')!;
    const spec = first['spec'] as { holderIdentity: string; leaseDurationSeconds: number; renewTime: string };
    assert.equal(spec.holderIdentity, 'n1');
    assert.equal(spec.leaseDurationSeconds, 40);
    assert.match(spec.renewTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    assert.deepEqual(first.metadata['ownerReferences'], [
      { apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'uid-1' },
    ]);
    // Two renewals arrive as MODIFIED events with a later renewTime each.
    let previous = spec.renewTime;
    for (let i = 0; i < 2; i++) {
      const [renewed] = (await once(changes, 'MODIFIED')) as [KubeObject];
      const t = (renewed['spec'] as { renewTime: string }).renewTime;
      assert.ok(t > previous, `${t} after ${previous}`);
      previous = t;
    }
  } finally {
    lease.stop();
    clearInterval(keepAlive);
  }
});

test('microTime has microseconds', () => {
  assert.equal(microTime(new Date('2026-11-24T03:00:01.234Z')), '2026-11-24T03:00:01.234000Z');
});
