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
