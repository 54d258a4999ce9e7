import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import * as openapiv2 from './generated/openapiv2/OpenAPIv2.pb.js';
import type { DocumentResponse } from '../negotiation.js';
import { RESOURCES } from '../resources.js';
import { refsIn, servedPaths } from './documents.js';
import { SWAGGER_SOURCE, swagger } from './generated/swagger.js';
import { openApi, OPENAPI_V2_PROTOBUF, OPENAPI_V2_PROTOBUF_CURRENT } from './index.js';
import { groupVersionPrefix, HTTP_METHODS, operationVerb, pathOwner } from './paths.js';
import type { JsonObject, UpstreamSwagger } from './types.js';

interface V3Document {
  openapi: string;
  info: JsonObject;
  paths: Record<string, Record<string, JsonObject>>;
  components: { schemas: Record<string, JsonObject>; securitySchemes: Record<string, JsonObject> };
}
type Discovery = { paths: Record<string, { serverRelativeURL: string }> };

function get(
  path: string,
  accept: string | undefined = 'application/json',
  query?: string,
): DocumentResponse {
  const res = openApi('GET', path, accept, { query: new URLSearchParams(query) });
  assert.ok(res, `${path} is an OpenAPI path`);
  return res;
}

function v3(group: string): V3Document {
  const res = get(`openapi/v3/${group}`);
  assert.equal(res.status, 200, group);
  return res.body as V3Document;
}

const v2 = () => get('openapi/v2').body as UpstreamSwagger;
const discovery = () => get('openapi/v3').body as Discovery;
const gvDocument = (r: { group: string; version: string }) => groupVersionPrefix(r).slice(1);
const servedGroupVersions = [...new Set(RESOURCES.map(gvDocument))].sort();
const servedGroups = [...new Set(RESOURCES.filter((r) => r.group !== '').map((r) => `apis/${r.group}`))];

describe('generated upstream swagger', () => {
  it('names its source: Kubernetes v1.35.0 swagger.json and its sha256', () => {
    assert.equal(SWAGGER_SOURCE.kubernetesVersion, 'v1.35.0');
    assert.match(SWAGGER_SOURCE.sha256, /^[0-9a-f]{64}$/);
    assert.equal(swagger.swagger, '2.0');
  });

  it('holds every served kind and every served subresource (else: npm run generate:openapi)', () => {
    const paths = Object.keys(servedPaths());
    for (const r of RESOURCES) {
      assert.ok(swagger.definitions[r.definition], `${r.definition} is generated`);
      for (const s of r.subresources) {
        assert.ok(
          paths.some((p) => p.endsWith(`/${r.resource}/{name}/${s.name}`)),
          `${r.resource}/${s.name} has a path`,
        );
      }
    }
  });
});

describe('/openapi/v3', () => {
  it('lists a document per served group-version, plus api, apis and each group', () => {
    const keys = Object.keys(discovery().paths);
    assert.deepEqual(keys, [...keys].sort());
    assert.deepEqual(
      keys.filter((k) => /^(api\/[^/]+|apis\/[^/]+\/[^/]+)$/.test(k)),
      servedGroupVersions,
    );
    assert.deepEqual(
      keys.filter((k) => !servedGroupVersions.includes(k)),
      ['api', 'apis', ...servedGroups].sort(),
    );
    assert.ok(keys.includes('api/v1') && keys.includes('apis/coordination.k8s.io/v1'));
    assert.ok(keys.includes('apis/authorization.k8s.io/v1'));
  });

  it('points at each document with ?hash= its ETag (SHA-512 of the document)', () => {
    for (const [group, { serverRelativeURL }] of Object.entries(discovery().paths)) {
      const m = /^\/openapi\/v3\/(.+)\?hash=([0-9A-F]{128})$/.exec(serverRelativeURL);
      assert.ok(m, serverRelativeURL);
      assert.equal(m[1], group);
      const res = get(`openapi/v3/${group}`, 'application/json', `hash=${m[2]}`);
      assert.equal(res.status, 200);
      assert.equal(res.contentType, 'application/json');
      assert.equal(m[2], createHash('sha512').update(res.serialized).digest('hex').toUpperCase());
      assert.equal(res.headers?.['ETag'], `"${m[2]}"`);
      assert.equal(res.headers?.['Cache-Control'], 'public, immutable');
      assert.equal(res.headers?.['Vary'], 'Accept');
      assert.ok(Date.parse(res.headers?.['Expires'] ?? '') > Date.now() + 364 * 24 * 3600 * 1000);
    }
  });

  it('redirects a stale hash to the current URL; without a hash, no immutable caching', () => {
    const res = get('openapi/v3/api/v1', 'application/json', 'hash=0123');
    assert.equal(res.status, 301);
    assert.equal(res.headers?.['Location'], discovery().paths['api/v1']!.serverRelativeURL);
    const plain = get('openapi/v3/api/v1');
    assert.equal(plain.status, 200);
    assert.equal(plain.headers?.['Cache-Control'], undefined);
  });

  it('answers 304 to If-None-Match with the current ETag', () => {
    const etag = get('openapi/v3/api/v1').headers?.['ETag'];
    const res = openApi('GET', 'openapi/v3/api/v1', 'application/json', { ifNoneMatch: etag });
    assert.equal(res?.status, 304);
    assert.equal(res?.serialized, '');
    const disco = get('openapi/v3');
    const again = openApi('GET', 'openapi/v3', undefined, { ifNoneMatch: disco.headers?.['ETag'] });
    assert.equal(again?.status, 304);
  });

  it('api/v1 has Pod with its GVK and the descriptions kubectl explain prints', () => {
    const doc = v3('api/v1');
    assert.equal(doc.openapi, '3.0.0');
    const pod = doc.components.schemas['io.k8s.api.core.v1.Pod']!;
    assert.deepEqual(pod['x-kubernetes-group-version-kind'], [{ group: '', kind: 'Pod', version: 'v1' }]);
    assert.match(String(pod['description']), /collection of containers/);
    assert.deepEqual((pod['properties'] as Record<string, JsonObject>)['spec']!['allOf'], [
      { $ref: '#/components/schemas/io.k8s.api.core.v1.PodSpec' },
    ]);
    const podSpec = doc.components.schemas['io.k8s.api.core.v1.PodSpec']!;
    const containers = (podSpec['properties'] as Record<string, JsonObject>)['containers']!;
    assert.match(String(containers['description']), /^List of containers belonging to the pod\./);
    assert.equal(containers['type'], 'array');
    assert.deepEqual(doc.components.securitySchemes['BearerToken']?.['type'], 'apiKey');
  });

  it('coordination.k8s.io/v1 has Lease, LeaseList and the lease paths', () => {
    const doc = v3('apis/coordination.k8s.io/v1');
    for (const name of ['Lease', 'LeaseList', 'LeaseSpec'])
      assert.ok(doc.components.schemas[`io.k8s.api.coordination.v1.${name}`], name);
    assert.equal(doc.components.schemas['io.k8s.api.core.v1.Pod'], undefined, 'only what the group reaches');
    const list = doc.paths['/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases']!;
    assert.equal(list['get']?.['x-kubernetes-action'], 'list');
    assert.ok(Object.keys(doc.paths).every((p) => p.startsWith('/apis/coordination.k8s.io/v1/')));
  });

  it("lets kubectl explain find every served kind (its plaintext template's lookup)", () => {
    for (const r of RESOURCES) {
      const doc = v3(gvDocument(r));
      const prefix = groupVersionPrefix(r);
      const searchPaths = [
        `${prefix}/${r.resource}`,
        `${prefix}/${r.resource}/{name}`,
        `${prefix}/namespaces/{namespace}/${r.resource}`,
        `${prefix}/namespaces/{namespace}/${r.resource}/{name}`,
      ];
      let gvk: unknown;
      for (const p of searchPaths) {
        for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
          gvk ??= doc.paths[p]?.[method]?.['x-kubernetes-group-version-kind'];
        }
      }
      assert.deepEqual(gvk, { group: r.group, kind: r.kind, version: r.version }, r.resource);
      const schema = Object.values(doc.components.schemas).find((s) =>
        (s['x-kubernetes-group-version-kind'] as unknown[] | undefined)?.some((g) =>
          isDeepStrictEqual(g, gvk),
        ),
      );
      assert.equal(schema, doc.components.schemas[r.definition], r.resource);
    }
  });

  it('leaves no dangling or v2-style $ref in any document', () => {
    for (const group of Object.keys(discovery().paths)) {
      const doc = v3(group);
      for (const ref of refsIn(doc)) {
        assert.ok(ref.startsWith('#/components/schemas/'), `${group}: ${ref}`);
        assert.ok(doc.components.schemas[ref.slice('#/components/schemas/'.length)], `${group}: ${ref}`);
      }
      // Every schema is there because something needs it (or it is a served kind, or Status).
      assert.ok(Object.keys(doc.components.schemas).length > 0, group);
    }
  });

  it('publishes only the operations resources.ts allows', () => {
    for (const group of servedGroupVersions) {
      for (const [path, item] of Object.entries(v3(group).paths)) {
        const owner = pathOwner(path);
        assert.ok(owner, path);
        for (const method of HTTP_METHODS) {
          const op = item[method];
          if (!op || owner.kind === 'discovery') continue;
          const verb = operationVerb(op['x-kubernetes-action'], method);
          const allowed =
            owner.subresource === undefined
              ? owner.resource.verbs
              : (owner.resource.subresources.find((s) => s.name === owner.subresource)?.verbs ?? []);
          assert.ok(verb && allowed.includes(verb), `${method} ${path} (${verb})`);
        }
      }
    }
    const core = v3('api/v1');
    assert.ok(
      core.paths['/api/v1/namespaces/{namespace}/pods']?.['post'],
      'pods allow create (kubectl apply)',
    );
    assert.ok(core.paths['/api/v1/namespaces/{namespace}/events']?.['post'], 'events allow create');
    assert.ok(core.paths['/api/v1/namespaces/{namespace}/pods/{name}/log']?.['get']);
    assert.equal(core.paths['/api/v1/namespaces/{namespace}/pods/{name}/exec'], undefined);
  });

  it('answers 404 for a group nobody serves, 406 when only protobuf is acceptable', () => {
    const missing = get('openapi/v3/apis/apps/v1');
    assert.equal(missing.status, 404);
    assert.equal((missing.body as { reason: string }).reason, 'NotFound');
    const pb = get('openapi/v3/api/v1', 'application/com.github.proto-openapi.spec.v3.v1.0+protobuf');
    assert.equal(pb.status, 406);
    // The discovery document is JSON whatever is asked (handler3 HandleDiscovery).
    assert.equal(get('openapi/v3', 'application/com.github.proto-openapi.spec.v3.v1.0+protobuf').status, 200);
  });
});

describe('/openapi/v2', () => {
  it('is Swagger 2.0 with the same definitions as the v3 documents together, verbatim upstream', () => {
    const doc = v2();
    assert.equal(doc.swagger, '2.0');
    const v3Schemas = new Set<string>();
    for (const group of Object.keys(discovery().paths))
      for (const name of Object.keys(v3(group).components.schemas)) v3Schemas.add(name);
    assert.deepEqual(Object.keys(doc.definitions).sort(), [...v3Schemas].sort());
    for (const [name, schema] of Object.entries(doc.definitions))
      assert.deepEqual(schema, swagger.definitions[name]);
    assert.ok(doc.definitions['io.k8s.api.core.v1.Pod']);
    assert.ok(doc.definitions['io.k8s.api.coordination.v1.Lease']);
    assert.ok(doc.definitions['io.k8s.apimachinery.pkg.apis.meta.v1.Status']);
  });

  it('resolves every $ref inside the document, paths included', () => {
    const doc = v2();
    for (const ref of refsIn(doc)) {
      const [, section, name] = /^#\/(definitions|parameters)\/(.+)$/.exec(ref) ?? [];
      assert.ok(section && name, ref);
      assert.ok((section === 'definitions' ? doc.definitions : doc.parameters)[name], ref);
    }
    assert.deepEqual(Object.keys(doc.paths), Object.keys(servedPaths()));
  });

  it('negotiates as kube-openapi pkg/handler: JSON or protobuf, else 406 with a Status', () => {
    const json = get('openapi/v2');
    for (const [accept, contentType] of [
      [undefined, 'application/json'],
      ['application/json', 'application/json'],
      ['*/*', 'application/json'],
      ['application/*', 'application/json'],
      [`application/json, ${OPENAPI_V2_PROTOBUF}`, 'application/json'],
      [`${OPENAPI_V2_PROTOBUF};q=0.5, application/json`, 'application/json'],
      [OPENAPI_V2_PROTOBUF, OPENAPI_V2_PROTOBUF_CURRENT],
      [OPENAPI_V2_PROTOBUF_CURRENT, OPENAPI_V2_PROTOBUF_CURRENT],
      [`${OPENAPI_V2_PROTOBUF}, application/json;q=0.5`, OPENAPI_V2_PROTOBUF_CURRENT],
      [`text/html, ${OPENAPI_V2_PROTOBUF_CURRENT};q=0.9`, OPENAPI_V2_PROTOBUF_CURRENT],
    ] as const) {
      const res = get('openapi/v2', accept);
      assert.equal(res.status, 200, String(accept));
      assert.equal(res.contentType, contentType, String(accept));
      // One ETag for both encodings (upstream reuses the JSON one): the SHA-512 of the JSON bytes.
      assert.equal(
        res.headers?.['ETag'],
        `"${createHash('sha512').update(json.serialized).digest('hex').toUpperCase()}"`,
      );
      assert.equal(res.headers?.['Vary'], 'Accept');
    }
    for (const accept of ['text/html', 'application/yaml', 'application/vnd.kubernetes.protobuf']) {
      const res = get('openapi/v2', accept);
      assert.equal(res.status, 406, accept);
      const status = res.body as JsonObject;
      assert.deepEqual([status['kind'], status['reason'], status['code']], ['Status', 'NotAcceptable', 406]);
    }
  });
});

describe('/openapi/v2 as protobuf (client-go discovery OpenAPISchema)', () => {
  const served = () => get('openapi/v2', OPENAPI_V2_PROTOBUF);
  const decoded = () => openapiv2.Document.decode(served().serialized as Uint8Array);
  const named = <V>(list: { name: string; value?: V | undefined }[]) =>
    Object.fromEntries(list.map((n) => [n.name, n.value!]));
  const extension = (s: { vendorExtension: openapiv2.NamedAny[] }, name: string) =>
    s.vendorExtension.find((e) => e.name === name)?.value?.yaml;

  it('is built once and answers 304 to the ETag it shares with JSON', () => {
    const res = served();
    assert.ok(res.serialized instanceof Uint8Array && res.serialized.length > 100_000);
    assert.equal(served().serialized, res.serialized, 'the same cached bytes');
    const etag = get('openapi/v2').headers?.['ETag'];
    const again = openApi('GET', 'openapi/v2', OPENAPI_V2_PROTOBUF, { ifNoneMatch: etag });
    assert.equal(again?.status, 304);
    assert.equal(again?.serialized, '');
  });

  it('decodes to the JSON document: definitions, paths and parameters in its order', () => {
    const doc = decoded();
    const json = v2();
    assert.equal(doc.swagger, '2.0');
    assert.deepEqual([doc.info?.title, doc.info?.version], [json.info['title'], json.info['version']]);
    assert.deepEqual(
      Object.keys(named(doc.definitions!.additionalProperties)),
      Object.keys(json.definitions),
    );
    assert.deepEqual(
      doc.paths!.path.map((p) => p.name),
      Object.keys(json.paths),
    );
    assert.deepEqual(Object.keys(named(doc.parameters!.additionalProperties)), Object.keys(json.parameters));
    const bearer = named(doc.securityDefinitions!.additionalProperties)['BearerToken'];
    assert.deepEqual([bearer?.apiKeySecurity?.in, bearer?.apiKeySecurity?.name], ['header', 'authorization']);
  });

  it('has Pod, PodSpec and Container as kubectl validates against them', () => {
    const defs = named(decoded().definitions!.additionalProperties);
    const pod = defs['io.k8s.api.core.v1.Pod']!;
    assert.deepEqual(pod.type?.value, ['object']);
    assert.equal(
      extension(pod, 'x-kubernetes-group-version-kind'),
      '- group: ""\n  kind: Pod\n  version: v1\n',
    );
    const podProps = named(pod.properties!.additionalProperties);
    assert.deepEqual(Object.keys(podProps), ['apiVersion', 'kind', 'metadata', 'spec', 'status']);
    assert.equal(podProps['spec']?.Ref, '#/definitions/io.k8s.api.core.v1.PodSpec');
    assert.deepEqual(podProps['apiVersion']?.type?.value, ['string']);

    const podSpec = defs['io.k8s.api.core.v1.PodSpec']!;
    assert.deepEqual(podSpec.required, ['containers']);
    const containers = named(podSpec.properties!.additionalProperties)['containers']!;
    assert.deepEqual(containers.type?.value, ['array']);
    assert.equal(containers.items?.schema.length, 1);
    assert.equal(containers.items?.schema[0]?.Ref, '#/definitions/io.k8s.api.core.v1.Container');
    assert.match(containers.description, /^List of containers belonging to the pod\./);
    assert.equal(extension(containers, 'x-kubernetes-patch-merge-key'), 'name\n');
    assert.equal(extension(containers, 'x-kubernetes-list-type'), 'map\n');
    assert.equal(extension(containers, 'x-kubernetes-list-map-keys'), '- name\n');

    assert.deepEqual(defs['io.k8s.api.core.v1.Container']!.required, ['name']);
    const lease = defs['io.k8s.api.coordination.v1.Lease']!;
    assert.equal(
      extension(lease, 'x-kubernetes-group-version-kind'),
      '- group: coordination.k8s.io\n  kind: Lease\n  version: v1\n',
    );
  });

  it("builds the models kubectl's validator builds (kube-openapi pkg/util/proto NewOpenAPIData)", () => {
    const defs = named(decoded().definitions!.additionalProperties);
    // document.go ParseSchema's rules, which fail the whole model (and kubectl's validation) if broken.
    const check = (s: openapiv2.Schema, path: string): void => {
      const types = s.type?.value ?? [];
      if (s.Ref !== '') {
        assert.equal(s.properties?.additionalProperties.length ?? 0, 0, `${path}: embedded type with a $ref`);
        assert.equal(types.length, 0, `${path}: a $ref with a type`);
        assert.match(s.Ref, /^#\/definitions\//, path);
        assert.ok(defs[s.Ref.slice('#/definitions/'.length)], `${path}: unknown model ${s.Ref}`);
        return;
      }
      assert.ok(types.length <= 1, `${path}: several types`);
      const [type] = types;
      if (type === 'array') {
        assert.equal(s.items?.schema.length, 1, `${path}: array needs exactly one sub-item`);
        return check(s.items.schema[0]!, `${path}[]`);
      }
      if (type === undefined || type === 'object') {
        if (s.properties) {
          for (const p of s.properties.additionalProperties) check(p.value!, `${path}.${p.name}`);
        } else if (s.additionalProperties?.schema) check(s.additionalProperties.schema, `${path}{}`);
        return;
      }
      assert.ok(['string', 'number', 'integer', 'boolean'].includes(type), `${path}: primitive ${type}`);
    };
    for (const [name, schema] of Object.entries(defs)) check(schema, name);
    // Every served kind is a model with its GVK, as kubectl looks them up.
    for (const r of RESOURCES) {
      const gvk = extension(defs[r.definition]!, 'x-kubernetes-group-version-kind') ?? '';
      assert.ok(gvk.includes(`kind: ${r.kind}\n`), r.definition);
    }
  });

  it('keeps the operations, their actions and GVKs', () => {
    const paths = named(decoded().paths!.path);
    const pod = paths['/api/v1/namespaces/{namespace}/pods/{name}']!;
    assert.equal(extension(pod.get!, 'x-kubernetes-action'), 'get\n');
    assert.equal(
      extension(pod.get!, 'x-kubernetes-group-version-kind'),
      'group: ""\nkind: Pod\nversion: v1\n',
    );
    assert.equal(pod.put, undefined, 'only served operations');
    assert.ok(paths['/api/v1/namespaces/{namespace}/pods']?.post, 'pods allow create (kubectl apply)');
    const events = paths['/api/v1/namespaces/{namespace}/events']!;
    const body = events.post!.parameters.find((p) => p.parameter?.bodyParameter)?.parameter?.bodyParameter;
    assert.equal(body?.schema?.Ref, '#/definitions/io.k8s.api.core.v1.Event');
    assert.deepEqual(
      events.parameters.map((p) => p.jsonReference?.Ref),
      ['#/parameters/namespace-vgWSWtn3', '#/parameters/pretty-tJGM1-ng'],
    );
    const dryRun = events.post!.parameters.find(
      (p) => p.parameter?.nonBodyParameter?.queryParameterSubSchema?.name === 'dryRun',
    );
    assert.ok(dryRun, 'an inline query parameter is a QueryParameterSubSchema');
    const name = paths['/api/v1/namespaces/{namespace}/events/{name}']!.parameters[0]?.parameter;
    assert.equal(name?.nonBodyParameter?.pathParameterSubSchema?.name, 'name');
    assert.equal(name?.nonBodyParameter?.pathParameterSubSchema?.required, true);
  });
});

describe('paths that are not OpenAPI documents', () => {
  for (const path of ['openapi', 'openapi/v1', 'openapiv2', 'api/v1', 'apis']) {
    it(`${path} → null`, () => assert.equal(openApi('GET', path, undefined), null));
  }
  it('answers 405 for methods other than GET and HEAD', () => {
    assert.equal(openApi('POST', 'openapi/v2', undefined)?.status, 405);
    assert.equal(openApi('HEAD', 'openapi/v2', undefined)?.status, 200);
  });
});
