// The resource.k8s.io/v1 kinds of the API slice against @kubernetes/client-node 1.4.0, unchanged:
// typed create/read/list/replace/patch/delete of DeviceClasses, ResourceSlices, ResourceClaims and
// templates, the claim's status subresource, optimistic concurrency, validation (422 with causes)
// and informers: a ListWatch on ResourceSlices with a field selector, and makeInformer on every
// other kind (DeviceClass, ResourceClaim with a status write, ResourceClaimTemplate, DeviceTaintRule).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import {
  CustomObjectsApi,
  KubeConfig,
  ListWatch,
  makeInformer,
  type KubernetesObject,
  PatchStrategy,
  ResourceV1Api,
  Watch,
  setHeaderOptions,
  type ResourceV1ResourceClaim,
  type V1ResourceSlice,
} from '@kubernetes/client-node';
import { startFixture, waitFor, type SimFixture } from './helpers.js';

const DRIVER = 'gpu.example.com';

const slice = (name: string, devices: string[], generation = 1): V1ResourceSlice => ({
  apiVersion: 'resource.k8s.io/v1',
  kind: 'ResourceSlice',
  metadata: { name },
  spec: {
    driver: DRIVER,
    nodeName: 'sim-node',
    pool: { name: 'sim-node', generation, resourceSliceCount: 1 },
    devices: devices.map((d, i) => ({
      name: d,
      attributes: { model: { string: 'A100' }, index: { _int: i } } as never,
      capacity: { memory: { value: '40Gi' } },
    })),
  },
});

const claim = (name: string): ResourceV1ResourceClaim => ({
  apiVersion: 'resource.k8s.io/v1',
  kind: 'ResourceClaim',
  metadata: { name, namespace: 'default' },
  spec: { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: DRIVER } }] } },
});

interface ApiError {
  code?: number;
  body?: string;
}
const status = (err: unknown) => JSON.parse((err as ApiError).body ?? '{}') as Record<string, unknown>;

describe('resource.k8s.io/v1 with @kubernetes/client-node', () => {
  let f: SimFixture;
  let api: ResourceV1Api;
  let kc: KubeConfig;
  before(async () => {
    f = await startFixture();
    kc = new KubeConfig();
    kc.loadFromFile(f.sim.kubeconfigPath);
    api = kc.makeApiClient(ResourceV1Api);
  });
  after(async () => {
    await f.cleanup();
  });

  test('DeviceClass and ResourceSlice: create, read, list by field selector, typed attributes kept', async () => {
    const dc = await api.createDeviceClass({
      body: {
        metadata: { name: DRIVER },
        spec: { selectors: [{ cel: { expression: `device.driver == "${DRIVER}"` } }] },
      },
    });
    assert.equal(dc.metadata?.generation, 1);
    assert.ok(dc.metadata?.uid);
    const created = await api.createResourceSlice({ body: slice('sim-node-gpu', ['gpu-0', 'gpu-1']) });
    assert.equal(created.spec.devices?.length, 2);
    const listed = await api.listResourceSlice({ fieldSelector: 'metadata.name=sim-node-gpu' });
    assert.deepEqual(
      listed.items.map((s) => s.metadata?.name),
      ['sim-node-gpu'],
    );
    const read = await api.readResourceSlice({ name: 'sim-node-gpu' });
    assert.equal(read.spec.devices?.[1]?.attributes?.['model']?.string, 'A100');
    await assert.rejects(
      api.createResourceSlice({ body: slice('sim-node-gpu', ['gpu-0']) }),
      (err: unknown) => (err as ApiError).code === 409 && status(err)['reason'] === 'AlreadyExists',
    );
  });

  test('a DeviceClass whose CEL selector does not compile is refused (422) with the compiler error', async () => {
    await assert.rejects(
      api.createDeviceClass({
        body: {
          metadata: { name: 'broken' },
          spec: { selectors: [{ cel: { expression: 'device.driver ==' } }] },
        },
      }),
      (err: unknown) => {
        const s = status(err);
        const [cause] = (s['details'] as { causes: { field: string; message: string }[] }).causes;
        assert.equal((err as ApiError).code, 422);
        assert.equal(cause?.field, 'spec.selectors[0].cel.expression');
        assert.match(cause?.message ?? '', /compilation failed/);
        return true;
      },
    );
    await assert.rejects(
      api.createDeviceClass({
        body: {
          metadata: { name: 'not-bool' },
          spec: { selectors: [{ cel: { expression: 'device.driver' } }] },
        },
      }),
      (err: unknown) =>
        (err as ApiError).code === 422 && /must evaluate to bool/.test(String(status(err)['message'])),
    );
  });

  test('a patch type the slice does not apply (server-side apply) is a 415 naming the ones it does', async () => {
    const res = await fetch(`${f.sim.url}/apis/resource.k8s.io/v1/deviceclasses/${DRIVER}`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/apply-patch+yaml' },
      body: 'spec: {}',
    });
    assert.equal(res.status, 415);
    const body = (await res.json()) as Record<string, unknown>;
    assert.equal(body['reason'], 'UnsupportedMediaType');
    assert.match(String(body['message']), /application\/merge-patch\+json/);
  });

  test('an invalid claim is refused with 422 and one cause per field, and nothing is stored', async () => {
    const bad = claim('bad');
    bad.spec.devices!.requests![0] = { name: 'GPU', exactly: { deviceClassName: '' } };
    await assert.rejects(
      api.createNamespacedResourceClaim({ namespace: 'default', body: bad }),
      (err: unknown) => {
        const s = status(err);
        const causes = (s['details'] as { causes: { field: string; reason: string }[] }).causes;
        assert.equal((err as ApiError).code, 422);
        assert.equal(s['reason'], 'Invalid');
        assert.deepEqual(
          causes.map((c) => [c.field, c.reason]),
          [
            ['spec.devices.requests[0].name', 'FieldValueInvalid'],
            ['spec.devices.requests[0].exactly.deviceClassName', 'FieldValueRequired'],
          ],
        );
        return true;
      },
    );
    await assert.rejects(
      api.readNamespacedResourceClaim({ name: 'bad', namespace: 'default' }),
      (err: unknown) => (err as ApiError).code === 404,
    );
  });

  test('claims: status only through the status subresource, spec immutable, stale writes conflict', async () => {
    const c = await api.createNamespacedResourceClaim({ namespace: 'default', body: claim('one-gpu') });
    assert.equal(c.status, undefined);
    const allocated = await api.replaceNamespacedResourceClaimStatus({
      name: 'one-gpu',
      namespace: 'default',
      body: {
        ...c,
        status: {
          allocation: {
            devices: { results: [{ request: 'gpu', driver: DRIVER, pool: 'sim-node', device: 'gpu-0' }] },
          },
          reservedFor: [{ resource: 'pods', name: 'train', uid: 'uid-1' }],
        },
      },
    });
    assert.equal(allocated.status?.allocation?.devices?.results?.[0]?.device, 'gpu-0');
    assert.equal(allocated.metadata?.generation, 1, 'a status write does not bump the generation');
    // The main resource keeps the stored status, whatever the body says.
    const relabelled = await api.replaceNamespacedResourceClaim({
      name: 'one-gpu',
      namespace: 'default',
      body: { ...allocated, metadata: { ...allocated.metadata, labels: { team: 'ml' } }, status: {} },
    });
    assert.equal(relabelled.status?.reservedFor?.[0]?.name, 'train');
    await assert.rejects(
      api.replaceNamespacedResourceClaim({ name: 'one-gpu', namespace: 'default', body: allocated }),
      (err: unknown) => (err as ApiError).code === 409 && status(err)['reason'] === 'Conflict',
    );
    const changed = structuredClone(relabelled);
    changed.spec.devices!.requests![0]!.exactly!.count = 2;
    await assert.rejects(
      api.replaceNamespacedResourceClaim({ name: 'one-gpu', namespace: 'default', body: changed }),
      (err: unknown) =>
        (err as ApiError).code === 422 &&
        /spec: Invalid value: .*field is immutable/.test(String(status(err)['message'])),
    );
    const deleted = await api.deleteNamespacedResourceClaim({ name: 'one-gpu', namespace: 'default' });
    assert.equal(deleted.metadata?.name, 'one-gpu');
  });

  test('an informer on ResourceSlices sees a driver update its pool in place (merge patch) and delete it', async () => {
    const informer = new ListWatch<V1ResourceSlice>(
      '/apis/resource.k8s.io/v1/resourceslices',
      new Watch(kc),
      () => api.listResourceSlice({ fieldSelector: 'spec.nodeName=sim-node' }),
      false,
      undefined,
      'spec.nodeName=sim-node',
    );
    const seen: string[] = [];
    informer.on('add', (s) => seen.push(`add ${s.metadata?.name} g${s.spec.pool.generation}`));
    informer.on('update', (s) => seen.push(`update ${s.metadata?.name} g${s.spec.pool.generation}`));
    informer.on('delete', (s) => seen.push(`delete ${s.metadata?.name}`));
    await informer.start();
    try {
      await waitFor(() => seen.includes('add sim-node-gpu g1'), 'the informer lists the slice');
      const patched = await api.patchResourceSlice(
        { name: 'sim-node-gpu', body: { spec: { pool: { generation: 2 } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      assert.equal(patched.spec.pool.generation, 2);
      assert.equal(patched.spec.pool.name, 'sim-node', 'a merge patch keeps what it does not name');
      assert.equal(patched.metadata?.generation, 2);
      await waitFor(() => seen.includes('update sim-node-gpu g2'), 'the informer sees the update');
      await api.deleteResourceSlice({ name: 'sim-node-gpu' });
      await waitFor(() => seen.includes('delete sim-node-gpu'), 'the informer sees the delete');
    } finally {
      await informer.stop();
    }
  });

  test(
    'makeInformer on DeviceClasses, ResourceClaims, templates and DeviceTaintRules: add, update, delete',
    { timeout: 20_000 },
    async () => {
      const custom = kc.makeApiClient(CustomObjectsApi);
      const group = 'resource.k8s.io';
      const kinds: {
        path: string;
        list: () => Promise<{ items: KubernetesObject[] }>;
        create: () => Promise<unknown>;
        update: () => Promise<unknown>;
        remove: () => Promise<unknown>;
        name: string;
        changed: (o: KubernetesObject) => boolean;
      }[] = [
        {
          path: '/apis/resource.k8s.io/v1/deviceclasses',
          list: () => api.listDeviceClass(),
          name: 'informed.example.com',
          create: () =>
            api.createDeviceClass({
              body: { metadata: { name: 'informed.example.com' }, spec: { selectors: [] } },
            }),
          update: async () => {
            const c = await api.readDeviceClass({ name: 'informed.example.com' });
            c.spec.selectors = [{ cel: { expression: 'device.driver == "gpu.example.com"' } }];
            return api.replaceDeviceClass({ name: 'informed.example.com', body: c });
          },
          changed: (o) => ((o as { spec?: { selectors?: unknown[] } }).spec?.selectors?.length ?? 0) === 1,
          remove: () => api.deleteDeviceClass({ name: 'informed.example.com' }),
        },
        {
          path: '/apis/resource.k8s.io/v1/namespaces/default/resourceclaims',
          list: () => api.listNamespacedResourceClaim({ namespace: 'default' }),
          name: 'informed-claim',
          create: () =>
            api.createNamespacedResourceClaim({ namespace: 'default', body: claim('informed-claim') }),
          // Through the status subresource: an allocation, as the scheduler writes it.
          update: async () => {
            const c = await api.readNamespacedResourceClaim({ namespace: 'default', name: 'informed-claim' });
            c.status = {
              allocation: {
                devices: { results: [{ request: 'gpu', driver: DRIVER, pool: 'sim-node', device: 'gpu-0' }] },
              },
            };
            return api.replaceNamespacedResourceClaimStatus({
              namespace: 'default',
              name: 'informed-claim',
              body: c,
            });
          },
          changed: (o) => (o as ResourceV1ResourceClaim).status?.allocation !== undefined,
          remove: () => api.deleteNamespacedResourceClaim({ namespace: 'default', name: 'informed-claim' }),
        },
        {
          path: '/apis/resource.k8s.io/v1/namespaces/default/resourceclaimtemplates',
          list: () => api.listNamespacedResourceClaimTemplate({ namespace: 'default' }),
          name: 'informed-template',
          create: () =>
            api.createNamespacedResourceClaimTemplate({
              namespace: 'default',
              body: { metadata: { name: 'informed-template' }, spec: { spec: claim('x').spec } },
            }),
          update: async () => {
            const t = await api.readNamespacedResourceClaimTemplate({
              namespace: 'default',
              name: 'informed-template',
            });
            t.metadata = { ...t.metadata, labels: { tier: 'gold' } };
            return api.replaceNamespacedResourceClaimTemplate({
              namespace: 'default',
              name: 'informed-template',
              body: t,
            });
          },
          changed: (o) => o.metadata?.labels?.['tier'] === 'gold',
          remove: () =>
            api.deleteNamespacedResourceClaimTemplate({ namespace: 'default', name: 'informed-template' }),
        },
        {
          // client-node 1.4 has no typed resource.k8s.io/v1 DeviceTaintRule API: the generic one.
          path: '/apis/resource.k8s.io/v1/devicetaintrules',
          list: () =>
            custom.listClusterCustomObject({ group, version: 'v1', plural: 'devicetaintrules' }) as Promise<{
              items: KubernetesObject[];
            }>,
          name: 'informed-rule',
          create: () =>
            custom.createClusterCustomObject({
              group,
              version: 'v1',
              plural: 'devicetaintrules',
              body: {
                apiVersion: 'resource.k8s.io/v1',
                kind: 'DeviceTaintRule',
                metadata: { name: 'informed-rule' },
                spec: {
                  deviceSelector: { driver: DRIVER },
                  taint: { key: 'example.com/ecc', effect: 'NoSchedule' },
                },
              },
            }),
          update: () =>
            custom.patchClusterCustomObject(
              {
                group,
                version: 'v1',
                plural: 'devicetaintrules',
                name: 'informed-rule',
                body: { spec: { taint: { key: 'example.com/ecc', effect: 'NoExecute' } } },
              },
              setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
            ),
          changed: (o) =>
            (o as { spec?: { taint?: { effect?: string } } }).spec?.taint?.effect === 'NoExecute',
          remove: () =>
            custom.deleteClusterCustomObject({
              group,
              version: 'v1',
              plural: 'devicetaintrules',
              name: 'informed-rule',
            }),
        },
      ];
      for (const k of kinds) {
        const informer = makeInformer(kc, k.path, k.list);
        const events = new EventEmitter();
        const next = (type: 'add' | 'update' | 'delete', ok: (o: KubernetesObject) => boolean = () => true) =>
          new Promise<void>((resolve) => {
            const on = (o: KubernetesObject) => {
              if (o.metadata?.name === k.name && ok(o)) {
                events.off(type, on);
                resolve();
              }
            };
            events.on(type, on);
          });
        for (const type of ['add', 'update', 'delete'] as const) {
          informer.on(type, (o: KubernetesObject) => events.emit(type, o));
        }
        const errors = new Promise<never>((_, reject) => {
          informer.on('error', (e: unknown) => reject(new Error(`${k.path}: informer error ${String(e)}`)));
        });
        await informer.start();
        try {
          const added = next('add');
          await k.create();
          await Promise.race([added, errors]);
          const updated = next('update', k.changed);
          await k.update();
          await Promise.race([updated, errors]);
          const deleted = next('delete');
          await k.remove();
          await Promise.race([deleted, errors]);
        } finally {
          await informer.stop();
        }
      }
    },
  );
});
