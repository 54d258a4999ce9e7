// resource.k8s.io/v1 DeviceTaintRule served by the API slice, over a real socket: discovery (legacy
// and aggregated, with the status subresource), the OpenAPI v3 document of resource.k8s.io/v1 (the
// schema derived from v1beta2, see scripts/generate-openapi.ts), the server-side Table, writes with
// @kubernetes/client-node's generic KubernetesObjectApi (client-node 1.4.0 has no typed v1 client
// for the kind) and an informer on it, the status subresource, v1's refusal of unconditional updates,
// and validation answered 422 with one cause per field.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  KubeConfig,
  KubernetesObjectApi,
  ListWatch,
  Watch,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { startFixture, waitFor, type SimFixture } from './helpers.js';

const GV = 'resource.k8s.io/v1';

interface DeviceTaintRule extends KubernetesObject {
  spec: {
    deviceSelector?: { driver?: string; pool?: string; device?: string };
    taint: { key: string; value?: string; effect: string; timeAdded?: string };
  };
  status?: { conditions?: Record<string, unknown>[] };
}

const rule = (name: string, effect: string): DeviceTaintRule => ({
  apiVersion: GV,
  kind: 'DeviceTaintRule',
  metadata: { name },
  spec: {
    deviceSelector: { driver: 'gpu.example.com', pool: 'sim-node', device: 'gpu-0' },
    taint: { key: 'example.com/maintenance', value: 'planned', effect },
  },
});

interface ApiError {
  code?: number;
  body?: string;
}
type Causes = { reason: string; field: string; message: string }[];

describe('DeviceTaintRule in the API slice', () => {
  let f: SimFixture;
  let objects: KubernetesObjectApi;
  let kc: KubeConfig;
  const url = (path: string) => `${f.sim.url}${path}`;
  const getJson = async (path: string, accept = 'application/json') => {
    const res = await fetch(url(path), { headers: { Accept: accept } });
    assert.equal(res.status, 200, `GET ${path}`);
    return (await res.json()) as Record<string, unknown>;
  };
  const send = (method: string, path: string, body: unknown) =>
    fetch(url(path), { method, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

  before(async () => {
    f = await startFixture();
    kc = new KubeConfig();
    kc.loadFromFile(f.sim.kubeconfigPath);
    objects = KubernetesObjectApi.makeApiClient(kc);
  });
  after(async () => {
    await f.cleanup();
  });

  test('discovery lists devicetaintrules and devicetaintrules/status in resource.k8s.io/v1', async () => {
    const list = (await getJson('/apis/resource.k8s.io/v1')) as {
      resources: { name: string; kind: string; namespaced: boolean; verbs: string[]; singularName: string }[];
    };
    const main = list.resources.find((r) => r.name === 'devicetaintrules');
    assert.deepEqual(main && { kind: main.kind, namespaced: main.namespaced, singular: main.singularName }, {
      kind: 'DeviceTaintRule',
      namespaced: false,
      singular: 'devicetaintrule',
    });
    assert.deepEqual([...main!.verbs].sort(), [
      'create',
      'delete',
      'deletecollection',
      'get',
      'list',
      'patch',
      'update',
      'watch',
    ]);
    assert.deepEqual(list.resources.find((r) => r.name === 'devicetaintrules/status')?.verbs.sort(), [
      'get',
      'patch',
      'update',
    ]);
    // Aggregated discovery, as kubectl asks for it.
    const aggregated = (await getJson(
      '/apis',
      'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList',
    )) as {
      items: {
        metadata: { name: string };
        versions: {
          version: string;
          resources: { resource: string; scope: string; subresources?: { subresource: string }[] }[];
        }[];
      }[];
    };
    const v1 = aggregated.items
      .find((g) => g.metadata.name === 'resource.k8s.io')
      ?.versions.find((v) => v.version === 'v1');
    const entry = v1?.resources.find((r) => r.resource === 'devicetaintrules');
    assert.equal(entry?.scope, 'Cluster');
    assert.deepEqual(
      entry?.subresources?.map((s) => s.subresource),
      ['status'],
    );
  });

  test('OpenAPI v3 of resource.k8s.io/v1 has the DeviceTaintRule schema (v1 GVK, no tombstoned fields) and its paths', async () => {
    const index = (await getJson('/openapi/v3')) as { paths: Record<string, { serverRelativeURL: string }> };
    const ref = index.paths['apis/resource.k8s.io/v1'];
    assert.ok(ref, 'resource.k8s.io/v1 has an OpenAPI v3 document');
    const doc = (await getJson(ref.serverRelativeURL)) as {
      paths: Record<string, Record<string, unknown>>;
      components: { schemas: Record<string, Record<string, unknown>> };
    };
    const schemas = doc.components.schemas;
    const kind = schemas['io.k8s.api.resource.v1.DeviceTaintRule'];
    assert.deepEqual(kind?.['x-kubernetes-group-version-kind'], [
      { group: 'resource.k8s.io', kind: 'DeviceTaintRule', version: 'v1' },
    ]);
    assert.deepEqual(Object.keys(kind?.['properties'] as object).sort(), [
      'apiVersion',
      'kind',
      'metadata',
      'spec',
      'status',
    ]);
    assert.deepEqual(
      Object.keys(schemas['io.k8s.api.resource.v1.DeviceTaintSelector']?.['properties'] as object).sort(),
      ['device', 'driver', 'pool'],
      'deviceClassName and selectors are tombstoned in v1',
    );
    assert.ok(schemas['io.k8s.api.resource.v1.DeviceTaintRuleStatus']);
    assert.ok(schemas['io.k8s.api.resource.v1.DeviceTaintRuleList']);
    for (const p of [
      '/apis/resource.k8s.io/v1/devicetaintrules',
      '/apis/resource.k8s.io/v1/devicetaintrules/{name}',
      '/apis/resource.k8s.io/v1/devicetaintrules/{name}/status',
    ])
      assert.ok(doc.paths[p], `${p} is documented`);
    assert.ok(!JSON.stringify(doc).includes('io.k8s.api.resource.v1beta2'), 'nothing points at v1beta2');
  });

  test('create, read, Table, status subresource, update and delete with the generic client; an informer sees it', async () => {
    const seen: string[] = [];
    const informer = new ListWatch<DeviceTaintRule>(
      '/apis/resource.k8s.io/v1/devicetaintrules',
      new Watch(kc),
      () => objects.list<DeviceTaintRule>(GV, 'DeviceTaintRule'),
      false,
    );
    informer.on('add', (r) => seen.push(`add ${r.metadata?.name} ${r.spec.taint.effect}`));
    informer.on('update', (r) => seen.push(`update ${r.metadata?.name} ${r.spec.taint.effect}`));
    informer.on('delete', (r) => seen.push(`delete ${r.metadata?.name}`));
    await informer.start();
    try {
      const created = await objects.create(rule('gpu-0-maintenance', 'NoSchedule'));
      assert.equal(created.metadata?.generation, 1);
      assert.match(
        created.spec.taint.timeAdded ?? '',
        /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/,
        'timeAdded defaulted',
      );
      await waitFor(() => seen.includes('add gpu-0-maintenance NoSchedule'), 'the informer sees the rule');

      const tableRes = await fetch(url('/apis/resource.k8s.io/v1/devicetaintrules'), {
        headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
      });
      const table = (await tableRes.json()) as {
        kind: string;
        columnDefinitions: { name: string }[];
        rows: { cells: unknown[] }[];
      };
      assert.equal(table.kind, 'Table');
      assert.deepEqual(
        table.columnDefinitions.map((c) => c.name),
        ['Name', 'Key', 'Value', 'Effect', 'TimeAdded', 'Age'],
      );
      assert.deepEqual(table.rows[0]?.cells.slice(0, 4), [
        'gpu-0-maintenance',
        'example.com/maintenance',
        'planned',
        'NoSchedule',
      ]);

      // The control plane's eviction controller writes the rule's status at once, as upstream's does.
      const ref = { apiVersion: GV, kind: 'DeviceTaintRule', metadata: { name: 'gpu-0-maintenance' } };
      let written: DeviceTaintRule | null = null;
      await waitFor(async () => {
        const r = await objects.read<DeviceTaintRule>(ref);
        if (r.status?.conditions?.length) written = r;
        return written !== null;
      }, "the eviction controller's condition");
      const { lastTransitionTime, ...condition } = written!.status!.conditions![0]!;
      assert.match(String(lastTransitionTime), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assert.deepEqual(condition, {
        type: 'EvictionInProgress',
        status: 'False',
        reason: 'OtherEffect',
        message: 'Eviction only happens for the NoExecute effect.',
        observedGeneration: 1,
      });

      // The status only through its subresource (what the eviction controller writes).
      const status = {
        conditions: [
          {
            type: 'EvictionInProgress',
            status: 'False',
            reason: 'NoEffect',
            message: '0 pods evicted since starting the controller.',
            lastTransitionTime: '2026-01-01T00:00:00Z',
            observedGeneration: 1,
          },
        ],
      };
      const statusRes = await send(
        'PUT',
        '/apis/resource.k8s.io/v1/devicetaintrules/gpu-0-maintenance/status',
        {
          ...written!,
          status,
        },
      );
      assert.equal(statusRes.status, 200);
      const read = await objects.read<DeviceTaintRule>({
        apiVersion: GV,
        kind: 'DeviceTaintRule',
        metadata: { name: 'gpu-0-maintenance' },
      });
      assert.deepEqual(read.status, status);

      // v1 refuses an update that names no resourceVersion; with it, the effect changes.
      const { resourceVersion: _rv, ...metadata } = read.metadata!;
      const unconditional = await send('PUT', '/apis/resource.k8s.io/v1/devicetaintrules/gpu-0-maintenance', {
        ...read,
        metadata,
      });
      assert.equal(unconditional.status, 422);
      const refused = (await unconditional.json()) as { message: string; details: { causes: Causes } };
      assert.deepEqual(
        refused.details.causes.map((c) => c.field),
        ['metadata.resourceVersion'],
      );
      assert.match(refused.message, /must be specified for an update/);
      const escalated = await objects.replace({
        ...read,
        spec: { ...read.spec, taint: { ...read.spec.taint, effect: 'NoExecute' } },
      });
      assert.equal(escalated.metadata?.generation, 2);
      assert.deepEqual(escalated.status, status, 'the main resource keeps the status');
      await waitFor(
        () => seen.includes('update gpu-0-maintenance NoExecute'),
        'the informer sees the update',
      );

      const deleted = await objects.delete(escalated);
      assert.deepEqual(
        { status: deleted.status, name: deleted.details?.name, kind: deleted.details?.kind },
        { status: 'Success', name: 'gpu-0-maintenance', kind: 'devicetaintrules' },
        'v1 answers a delete with a Status',
      );
      await waitFor(() => seen.includes('delete gpu-0-maintenance'), 'the informer sees the delete');
    } finally {
      await informer.stop();
    }
  });

  test('a bad effect and a bad key are refused (422) with one cause per field; nothing is stored', async () => {
    const bad = rule('bad', 'PreferNoSchedule');
    bad.spec.taint.key = 'example.com/not a key';
    await assert.rejects(objects.create(bad), (err: unknown) => {
      const e = err as ApiError;
      const status = JSON.parse(e.body ?? '{}') as {
        reason: string;
        message: string;
        details: { causes: Causes };
      };
      assert.equal(e.code, 422);
      assert.equal(status.reason, 'Invalid');
      assert.deepEqual(
        status.details.causes.map((c) => [c.field, c.reason]),
        [
          ['spec.taint.key', 'FieldValueInvalid'],
          ['spec.taint.effect', 'FieldValueNotSupported'],
        ],
      );
      assert.equal(
        status.details.causes[1]?.message,
        'Unsupported value: "PreferNoSchedule": supported values: "NoExecute", "NoSchedule", "None"',
      );
      assert.match(
        status.message,
        /^DeviceTaintRule\.resource\.k8s\.io "bad" is invalid: \[spec\.taint\.key: /,
      );
      return true;
    });
    const missing = await fetch(url('/apis/resource.k8s.io/v1/devicetaintrules/bad'));
    assert.equal(missing.status, 404);
  });
});
