import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { AGGREGATED_DISCOVERY_V2, discovery } from './discovery.js';
import type { DocumentResponse } from './negotiation.js';
import { apiGroups, RESOURCES } from './resources.js';

/** What kubectl v1.35 sends to /api and /apis (client-go acceptDiscoveryFormats). */
const KUBECTL_ACCEPT =
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,' +
  'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';
const V2BETA1 = 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList';

interface APIResource {
  name: string;
  singularName: string;
  namespaced: boolean;
  kind: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
}
interface APIResourceList {
  kind: string;
  apiVersion?: string;
  groupVersion: string;
  resources: APIResource[];
}
interface GVK {
  group: string;
  version: string;
  kind: string;
}
interface APIResourceDiscovery {
  resource: string;
  responseKind: GVK;
  scope: 'Namespaced' | 'Cluster';
  singularResource: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  subresources?: { subresource: string; responseKind: GVK; verbs: string[] }[];
}
interface APIGroupDiscoveryList {
  kind: string;
  apiVersion: string;
  metadata: object;
  items: {
    metadata: { name?: string };
    versions: { version: string; resources: APIResourceDiscovery[]; freshness: string }[];
  }[];
}

function get(path: string, accept?: string, ifNoneMatch?: string): DocumentResponse {
  const res = discovery('GET', path, accept, { ifNoneMatch });
  assert.ok(res, `${path} is a discovery path`);
  if (res.status === 200) assert.equal(res.serialized, JSON.stringify(res.body));
  return res;
}

/** client-go ContentTypeIsGVK: mime.ParseMediaType, then g, v and as compared. */
function contentTypeGVK(contentType: string): Record<string, string> {
  const [base, ...params] = contentType.split(';').map((s) => s.trim());
  return Object.fromEntries([['base', base!], ...params.map((p) => p.split('=') as [string, string])]);
}

describe('legacy discovery', () => {
  it('/api lists the core versions (APIVersions)', () => {
    const res = get('api');
    assert.equal(res.contentType, 'application/json');
    assert.deepEqual(res.body, { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] });
  });

  it('/api/v1 lists resources and subresources by name, with short names and categories', () => {
    const list = get('api/v1').body as APIResourceList;
    assert.equal(list.kind, 'APIResourceList');
    assert.equal(list.apiVersion, undefined, 'kube-apiserver sends no apiVersion at /api/v1');
    assert.equal(list.groupVersion, 'v1');
    const names = list.resources.map((r) => r.name);
    assert.deepEqual(names, [...names].sort());
    const byName = new Map(list.resources.map((r) => [r.name, r]));
    for (const [name, short] of [
      ['pods', 'po'],
      ['nodes', 'no'],
      ['events', 'ev'],
      ['namespaces', 'ns'],
      ['services', 'svc'],
    ] as const) {
      assert.deepEqual(byName.get(name)?.shortNames, [short], name);
    }
    assert.deepEqual(byName.get('pods')?.categories, ['all']);
    assert.deepEqual(byName.get('services')?.categories, ['all']);
    assert.equal(byName.get('nodes')?.categories, undefined);
    const pods = RESOURCES.find((r) => r.resource === 'pods')!;
    assert.deepEqual(byName.get('pods'), {
      name: 'pods',
      singularName: 'pod',
      namespaced: true,
      kind: 'Pod',
      verbs: [...pods.verbs].sort(),
      shortNames: ['po'],
      categories: ['all'],
    });
    assert.deepEqual(byName.get('pods/log'), {
      name: 'pods/log',
      singularName: '',
      namespaced: true,
      kind: 'Pod',
      verbs: ['get'],
    });
    for (const r of list.resources) assert.deepEqual(r.verbs, [...r.verbs].sort(), `${r.name} verbs sorted`);
  });

  it('/apis lists the groups in kube-apiserver priority order, each with its preferred version', () => {
    const list = get('apis').body as { kind: string; apiVersion: string; groups: { name: string }[] };
    assert.equal(list.kind, 'APIGroupList');
    assert.equal(list.apiVersion, 'v1');
    const names = list.groups.map((g) => g.name);
    assert.deepEqual([...names].sort(), apiGroups().sort());
    // authorization.k8s.io (GroupPriorityMinimum 17600) before coordination.k8s.io (16500).
    assert.ok(names.indexOf('authorization.k8s.io') < names.indexOf('coordination.k8s.io'));
    assert.deepEqual(
      list.groups.find((g) => g.name === 'coordination.k8s.io'),
      {
        name: 'coordination.k8s.io',
        versions: [{ groupVersion: 'coordination.k8s.io/v1', version: 'v1' }],
        preferredVersion: { groupVersion: 'coordination.k8s.io/v1', version: 'v1' },
      },
    );
  });

  it('/apis/{group} is the APIGroup, /apis/{group}/{version} its APIResourceList', () => {
    assert.deepEqual(get('apis/coordination.k8s.io').body, {
      kind: 'APIGroup',
      apiVersion: 'v1',
      name: 'coordination.k8s.io',
      versions: [{ groupVersion: 'coordination.k8s.io/v1', version: 'v1' }],
      preferredVersion: { groupVersion: 'coordination.k8s.io/v1', version: 'v1' },
    });
    assert.deepEqual(get('/apis/coordination.k8s.io/v1/').body, {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: 'coordination.k8s.io/v1',
      resources: [
        {
          name: 'leases',
          singularName: 'lease',
          namespaced: true,
          kind: 'Lease',
          verbs: [...RESOURCES.find((r) => r.resource === 'leases')!.verbs].sort(),
        },
      ],
    });
  });

  it('serves every resource of resources.ts', () => {
    for (const r of RESOURCES) {
      const gv = r.group === '' ? `api/${r.version}` : `apis/${r.group}/${r.version}`;
      const list = get(gv).body as APIResourceList;
      const entry = list.resources.find((e) => e.name === r.resource);
      assert.ok(entry, `${r.resource} in ${gv}`);
      assert.equal(entry.kind, r.kind);
      assert.equal(entry.namespaced, r.namespaced);
      for (const s of r.subresources)
        assert.ok(list.resources.some((e) => e.name === `${r.resource}/${s.name}`));
    }
  });
});

describe('aggregated discovery (apidiscovery.k8s.io/v2)', () => {
  it("answers kubectl's Accept with the APIGroupDiscoveryList and echoes the GVK in Content-Type", () => {
    for (const path of ['api', 'apis']) {
      const res = get(path, KUBECTL_ACCEPT);
      assert.equal(res.status, 200);
      assert.equal(res.contentType, AGGREGATED_DISCOVERY_V2);
      assert.deepEqual(contentTypeGVK(res.contentType), {
        base: 'application/json',
        g: 'apidiscovery.k8s.io',
        v: 'v2',
        as: 'APIGroupDiscoveryList',
      });
      const list = res.body as APIGroupDiscoveryList;
      assert.equal(list.kind, 'APIGroupDiscoveryList');
      assert.equal(list.apiVersion, 'apidiscovery.k8s.io/v2');
      assert.deepEqual(list.metadata, {});
    }
  });

  it('/api carries the core group (no name), resources with responseKind, scope and subresources', () => {
    const list = get('api', KUBECTL_ACCEPT).body as APIGroupDiscoveryList;
    assert.equal(list.items.length, 1);
    const [core] = list.items;
    assert.deepEqual(core!.metadata, {});
    const [v1] = core!.versions;
    assert.equal(v1!.version, 'v1');
    assert.equal(v1!.freshness, 'Current');
    const pods = RESOURCES.find((r) => r.resource === 'pods')!;
    assert.deepEqual(
      v1!.resources.find((r) => r.resource === 'pods'),
      {
        resource: 'pods',
        responseKind: { group: '', version: '', kind: 'Pod' },
        scope: 'Namespaced',
        singularResource: 'pod',
        verbs: [...pods.verbs].sort(),
        shortNames: ['po'],
        categories: ['all'],
        subresources: pods.subresources
          .map((s) => ({
            subresource: s.name,
            responseKind: { group: '', version: '', kind: s.kind },
            verbs: [...s.verbs].sort(),
          }))
          .sort((a, b) => a.subresource.localeCompare(b.subresource)),
      },
    );
    assert.deepEqual(
      v1!.resources.find((r) => r.resource === 'pods')?.subresources?.find((s) => s.subresource === 'log'),
      { subresource: 'log', responseKind: { group: '', version: '', kind: 'Pod' }, verbs: ['get'] },
    );
    const nodes = v1!.resources.find((r) => r.resource === 'nodes');
    assert.equal(nodes?.scope, 'Cluster');
    assert.deepEqual(nodes?.shortNames, ['no']);
    const services = v1!.resources.find((r) => r.resource === 'services');
    assert.deepEqual(services?.categories, ['all']);
    const shortNames = v1!.resources.flatMap((r) => r.shortNames ?? []);
    for (const short of ['ev', 'ns', 'no', 'po', 'svc']) assert.ok(shortNames.includes(short), short);
  });

  it('/apis carries the other groups in priority order', () => {
    const list = get('apis', KUBECTL_ACCEPT).body as APIGroupDiscoveryList;
    const legacy = get('apis').body as { groups: { name: string }[] };
    assert.deepEqual(
      list.items.map((g) => g.metadata.name),
      legacy.groups.map((g) => g.name),
    );
    const coordination = list.items.find((g) => g.metadata.name === 'coordination.k8s.io');
    const leases = coordination?.versions[0]?.resources.find((r) => r.resource === 'leases');
    assert.deepEqual(leases, {
      resource: 'leases',
      responseKind: { group: '', version: '', kind: 'Lease' },
      scope: 'Namespaced',
      singularResource: 'lease',
      verbs: [...RESOURCES.find((r) => r.resource === 'leases')!.verbs].sort(),
    });
  });

  it('says what the legacy documents say (as client-go splits it back into APIResourceLists)', () => {
    for (const [root, gvPath] of [
      ['api', (_g: string, v: string) => `api/${v}`],
      ['apis', (g: string, v: string) => `apis/${g}/${v}`],
    ] as const) {
      const list = get(root, KUBECTL_ACCEPT).body as APIGroupDiscoveryList;
      for (const group of list.items) {
        for (const version of group.versions) {
          const split = version.resources.flatMap((r) => [
            {
              name: r.resource,
              singularName: r.singularResource,
              namespaced: r.scope === 'Namespaced',
              kind: r.responseKind.kind,
              verbs: r.verbs,
              ...(r.shortNames ? { shortNames: r.shortNames } : {}),
              ...(r.categories ? { categories: r.categories } : {}),
            },
            ...(r.subresources ?? []).map((s) => ({
              name: `${r.resource}/${s.subresource}`,
              singularName: '',
              namespaced: r.scope === 'Namespaced',
              kind: s.responseKind.kind,
              verbs: s.verbs,
            })),
          ]);
          const legacy = get(gvPath(group.metadata.name ?? '', version.version)).body as APIResourceList;
          assert.deepEqual(split, legacy.resources);
        }
      }
    }
  });

  it('sends an ETag (SHA-512 of the body), Vary: Accept, and 304 for a matching If-None-Match', () => {
    const res = get('apis', KUBECTL_ACCEPT);
    const hash = createHash('sha512').update(res.serialized).digest('hex').toUpperCase();
    assert.deepEqual(res.headers, { ETag: `"${hash}"`, Vary: 'Accept', 'Cache-Control': 'public' });
    const again = get('apis', KUBECTL_ACCEPT, `"${hash}"`);
    assert.equal(again.status, 304);
    assert.equal(again.serialized, '');
    assert.equal(again.headers?.['ETag'], `"${hash}"`);
    assert.equal(get('apis', KUBECTL_ACCEPT, '"stale"').status, 200);
    assert.notEqual(get('api', KUBECTL_ACCEPT).headers?.['ETag'], `"${hash}"`);
  });
});

describe('content negotiation', () => {
  const cases: { path: string; accept: string | undefined; want: 'aggregated' | 'legacy' | 406 }[] = [
    { path: 'apis', accept: undefined, want: 'legacy' },
    { path: 'apis', accept: 'application/json', want: 'legacy' },
    { path: 'apis', accept: '*/*', want: 'legacy' },
    { path: 'apis', accept: 'application/json, */*', want: 'legacy' },
    { path: 'apis', accept: AGGREGATED_DISCOVERY_V2, want: 'aggregated' },
    { path: 'api', accept: KUBECTL_ACCEPT, want: 'aggregated' },
    {
      path: 'apis',
      accept: `${AGGREGATED_DISCOVERY_V2};profile=nopeer,application/json`,
      want: 'aggregated',
    },
    { path: 'apis', accept: `application/json;q=0.9, ${AGGREGATED_DISCOVERY_V2}`, want: 'aggregated' },
    { path: 'apis', accept: `${AGGREGATED_DISCOVERY_V2};q=0.5, application/json`, want: 'legacy' },
    // v2beta1 is no longer served (AggregatedDiscoveryRemoveBetaType is locked on since 1.35).
    { path: 'apis', accept: `${V2BETA1},application/json`, want: 'legacy' },
    { path: 'apis', accept: V2BETA1, want: 406 },
    { path: 'apis', accept: 'application/json;as=Table;v=v1;g=meta.k8s.io', want: 406 },
    { path: 'apis', accept: 'application/vnd.kubernetes.protobuf', want: 406 },
    // Only /api and /apis aggregate: the group and group-version documents are legacy only.
    { path: 'api/v1', accept: KUBECTL_ACCEPT, want: 'legacy' },
    { path: 'apis/coordination.k8s.io', accept: AGGREGATED_DISCOVERY_V2, want: 406 },
  ];
  for (const { path, accept, want } of cases) {
    it(`${path} with ${JSON.stringify(accept)} → ${want}`, () => {
      const res = discovery('GET', path, accept);
      assert.ok(res);
      if (want === 406) {
        assert.equal(res.status, 406);
        assert.equal(res.contentType, 'application/json');
        assert.deepEqual(
          { kind: (res.body as { kind: string }).kind, reason: (res.body as { reason: string }).reason },
          { kind: 'Status', reason: 'NotAcceptable' },
        );
      } else {
        assert.equal(res.status, 200);
        assert.equal(res.contentType, want === 'aggregated' ? AGGREGATED_DISCOVERY_V2 : 'application/json');
        assert.equal((res.body as { kind: string }).kind === 'APIGroupDiscoveryList', want === 'aggregated');
      }
    });
  }
});

describe('paths that are not discovery documents', () => {
  for (const path of [
    'apis/apps',
    'apis/apps/v1',
    'apis/coordination.k8s.io/v2',
    'api/v2',
    'apis/coordination.k8s.io/v1/leases',
    'api/v1/pods',
    'apis//v1',
    'version',
    'openapi/v2',
    '',
  ]) {
    it(`${JSON.stringify(path)} → null (the router's 404)`, () => {
      assert.equal(discovery('GET', path, undefined), null);
    });
  }

  it('answers 405 for methods other than GET', () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const res = discovery(method, 'apis', undefined);
      assert.equal(res?.status, 405);
      assert.equal((res?.body as { reason: string }).reason, 'MethodNotAllowed');
    }
  });
});
