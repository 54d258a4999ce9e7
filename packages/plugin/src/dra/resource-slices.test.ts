import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import type { ResourceSlice } from './api-types.js';
import type { DraKubeApi } from './kube-api.js';
import { ResourceSlicePublisher, type PublishedEvent } from './resource-slices.js';

/** An in-memory API whose writes the test releases by hand. */
function slowApi(): {
  api: DraKubeApi;
  stored: ResourceSlice[];
  lists: () => number;
  release: () => void;
  writing: Promise<void>;
} {
  const stored: ResourceSlice[] = [];
  let lists = 0;
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let started!: () => void;
  const writing = new Promise<void>((r) => (started = r));
  const api: DraKubeApi = {
    readNodeUid: () => Promise.resolve('node-uid'),
    readResourceClaim: () => Promise.resolve(null),
    patchResourceClaimStatus: () => Promise.resolve(),
    listResourceSlices: () => {
      lists++;
      return Promise.resolve(stored.map((s) => structuredClone(s)));
    },
    createResourceSlice: async (slice) => {
      started();
      await gate;
      const written = {
        ...slice,
        metadata: {
          ...slice.metadata,
          name: `${slice.metadata.generateName ?? ''}x`,
          uid: 'u',
          resourceVersion: '1',
        },
      };
      stored.push(written);
      return written;
    },
    replaceResourceSlice: (slice) => Promise.resolve(slice),
    deleteResourceSlice: () => Promise.resolve(true),
  };
  return { api, stored, lists: () => lists, release, writing };
}

describe('ResourceSlicePublisher', () => {
  it('a resync while a write is in flight does not lose the write: it is published, then the next sync lists afresh', async () => {
    const { api, stored, lists, release, writing } = slowApi();
    const events: PublishedEvent[] = [];
    const publisher = new ResourceSlicePublisher({
      driverName: 'gpu.example.com',
      nodeName: 'node-a',
      poolName: 'node-a',
      kube: api,
      devices: () => [{ name: 'gpu-0' }],
      maxDevicesPerSlice: 64,
      logger: pino({ level: 'silent' }),
      resyncMs: 3_600_000,
      onPublished: (e) => events.push(e),
    });
    publisher.start();
    try {
      await writing;
      publisher.resync(); // the resync timer, firing while the create awaits the API server
      release();
      // A deadline, not a pause: before the fix the write was never reported and this waited forever.
      const deadline = Date.now() + 10_000;
      while (!(events.length > 0 && lists() >= 2)) {
        assert.ok(Date.now() < deadline, `not published: ${JSON.stringify(publisher.stats())}`);
        await new Promise((r) => setImmediate(r));
      }
      assert.equal(events[0]?.created, 1, 'the create counts as published');
      assert.equal(stored.length, 1);
      assert.equal(publisher.stats().error, null);
      assert.equal(lists(), 2, 'the resync listed again after the write');
      assert.equal(events.length, 1, 'and found the slice in sync: no second write');
    } finally {
      await publisher.stop();
    }
  });
});

describe('ResourceSlicePublisher with counter sets (partitionable devices)', () => {
  /** An in-memory API server that stores what it is sent. */
  function memoryApi(): { api: DraKubeApi; stored: ResourceSlice[]; writes: () => number } {
    const stored: ResourceSlice[] = [];
    let writes = 0;
    let n = 0;
    const api: DraKubeApi = {
      readNodeUid: () => Promise.resolve('node-uid'),
      readResourceClaim: () => Promise.resolve(null),
      patchResourceClaimStatus: () => Promise.resolve(),
      listResourceSlices: () => Promise.resolve(stored.map((s) => structuredClone(s))),
      createResourceSlice: (slice) => {
        writes++;
        const name = `${slice.metadata.generateName ?? ''}${n++}`;
        const written = { ...slice, metadata: { ...slice.metadata, name, uid: name, resourceVersion: '1' } };
        stored.push(structuredClone(written));
        return Promise.resolve(written);
      },
      replaceResourceSlice: (slice) => {
        writes++;
        const i = stored.findIndex((s) => s.metadata.name === slice.metadata.name);
        stored[i] = structuredClone(slice);
        return Promise.resolve(slice);
      },
      deleteResourceSlice: (name) => {
        stored.splice(
          stored.findIndex((s) => s.metadata.name === name),
          1,
        );
        return Promise.resolve(true);
      },
    };
    return { api, stored, writes: () => writes };
  }

  it('publishes the counter sets alone in slice 0 and the devices after it, and is then in sync', async () => {
    const { api, stored, writes } = memoryApi();
    const events: PublishedEvent[] = [];
    const publisher = new ResourceSlicePublisher({
      driverName: 'gpu.example.com',
      nodeName: 'node-a',
      poolName: 'node-a',
      kube: api,
      devices: () => [
        {
          name: 'gpu-0-whole',
          consumesCounters: [{ counterSet: 'gpu-0', counters: { memory: { value: '40Gi' } } }],
        },
        {
          name: 'gpu-0-half-0',
          consumesCounters: [{ counterSet: 'gpu-0', counters: { memory: { value: '20Gi' } } }],
        },
        {
          name: 'gpu-0-half-1',
          consumesCounters: [{ counterSet: 'gpu-0', counters: { memory: { value: '20Gi' } } }],
        },
      ],
      sharedCounters: () => [{ name: 'gpu-0', counters: { memory: { value: '40Gi' } } }],
      maxDevicesPerSlice: 2,
      logger: pino({ level: 'silent' }),
      resyncMs: 3_600_000,
      onPublished: (e) => events.push(e),
    });
    publisher.start();
    try {
      const deadline = Date.now() + 10_000;
      while (events.length === 0) {
        assert.ok(Date.now() < deadline, `not published: ${JSON.stringify(publisher.stats())}`);
        await new Promise((r) => setImmediate(r));
      }
      const byName = [...stored].sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
      assert.deepEqual(
        byName.map((s) => [
          s.metadata.name?.slice(0, 5),
          s.spec.sharedCounters?.map((c) => c.name) ?? null,
          s.spec.devices?.map((d) => d.name) ?? null,
          s.spec.pool.resourceSliceCount,
        ]),
        [
          ['00000', ['gpu-0'], null, 3],
          ['00001', null, ['gpu-0-whole', 'gpu-0-half-0'], 3],
          ['00002', null, ['gpu-0-half-1'], 3],
        ],
      );
      const before = writes();
      publisher.resync();
      const again = Date.now() + 10_000;
      while (publisher.stats().requests.list < 2) {
        assert.ok(Date.now() < again, 'listed again');
        await new Promise((r) => setImmediate(r));
      }
      await new Promise((r) => setImmediate(r));
      assert.equal(writes(), before, 'in sync after a fresh list: nothing written again');
    } finally {
      await publisher.stop();
    }
  });
});
