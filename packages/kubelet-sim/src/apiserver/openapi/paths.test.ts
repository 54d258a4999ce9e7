import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RESOURCES, type ResourceInfo } from '../resources.js';
import { operationServed, operationVerb, pathOwner, v3DocumentOf, type PathOwner } from './paths.js';

function owner(path: string): string | undefined {
  const o = pathOwner(path);
  if (!o) return undefined;
  if (o.kind === 'discovery') return 'discovery';
  return o.subresource === undefined ? o.resource.resource : `${o.resource.resource}/${o.subresource}`;
}

describe('pathOwner', () => {
  const cases: [string, string | undefined][] = [
    ['/api/', 'discovery'],
    ['/api/v1/', 'discovery'],
    ['/apis/', 'discovery'],
    ['/apis/coordination.k8s.io/', 'discovery'],
    ['/apis/coordination.k8s.io/v1/', 'discovery'],
    ['/apis/apps/', undefined],
    ['/apis/apps/v1/', undefined],
    ['/api/v1/pods', 'pods'],
    ['/api/v1/namespaces/{namespace}/pods', 'pods'],
    ['/api/v1/namespaces/{namespace}/pods/{name}', 'pods'],
    ['/api/v1/namespaces/{namespace}/pods/{name}/log', 'pods/log'],
    ['/api/v1/namespaces/{namespace}/pods/{name}/proxy/{path}', 'pods/proxy'],
    ['/api/v1/watch/namespaces/{namespace}/pods/{name}', 'pods'],
    ['/api/v1/watch/pods', 'pods'],
    ['/api/v1/namespaces', 'namespaces'],
    ['/api/v1/namespaces/{name}', 'namespaces'],
    ['/api/v1/namespaces/{name}/status', 'namespaces/status'],
    ['/api/v1/watch/namespaces/{name}', 'namespaces'],
    ['/api/v1/nodes/{name}/proxy', 'nodes/proxy'],
    ['/api/v1/namespaces/{namespace}/configmaps', undefined],
    ['/api/v1/podtemplates', undefined],
    ['/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}', 'leases'],
    ['/apis/coordination.k8s.io/v1beta1/namespaces/{namespace}/leases', undefined],
    ['/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', 'selfsubjectaccessreviews'],
    ['/apis/authorization.k8s.io/v1/subjectaccessreviews', undefined],
  ];
  for (const [path, want] of cases) {
    it(`${path} → ${want ?? 'not served'}`, () => assert.equal(owner(path), want));
  }
});

describe('operations served', () => {
  const pods = RESOURCES.find((r) => r.resource === 'pods')!;
  const withVerbs = (r: ResourceInfo, verbs: ResourceInfo['verbs']): ResourceInfo => ({ ...r, verbs });
  const resourceOwner = (resource: ResourceInfo, subresource?: string): PathOwner => ({
    kind: 'resource',
    resource,
    subresource,
  });

  it('maps x-kubernetes-action to the RBAC verb', () => {
    assert.equal(operationVerb('list', 'get'), 'list');
    assert.equal(operationVerb('watchlist', 'get'), 'watch');
    assert.equal(operationVerb('watch', 'get'), 'watch');
    assert.equal(operationVerb('post', 'post'), 'create');
    assert.equal(operationVerb('put', 'put'), 'update');
    assert.equal(operationVerb('deletecollection', 'delete'), 'deletecollection');
    assert.equal(operationVerb('connect', 'head'), 'get');
    assert.equal(operationVerb('connect', 'options'), 'get');
    assert.equal(operationVerb('connect', 'put'), 'update');
    assert.equal(operationVerb(undefined, 'get'), undefined);
  });

  it('keeps only the verbs a resource (or subresource) allows', () => {
    const read = resourceOwner(withVerbs(pods, ['get', 'list', 'watch']));
    assert.equal(operationServed(read, 'get', { 'x-kubernetes-action': 'list' }), true);
    assert.equal(operationServed(read, 'post', { 'x-kubernetes-action': 'post' }), false);
    assert.equal(operationServed(read, 'delete', { 'x-kubernetes-action': 'deletecollection' }), false);
    const log = resourceOwner(
      { ...pods, subresources: [{ name: 'log', kind: 'Pod', verbs: ['get'] }] },
      'log',
    );
    assert.equal(operationServed(log, 'get', { 'x-kubernetes-action': 'get' }), true);
    const unserved = resourceOwner({ ...pods, subresources: [] }, 'exec');
    assert.equal(operationServed(unserved, 'get', { 'x-kubernetes-action': 'connect' }), false);
    assert.equal(operationServed({ kind: 'discovery' }, 'get', {}), true);
  });
});

describe('v3DocumentOf', () => {
  const cases: [string, string | undefined][] = [
    ['/api/', 'api'],
    ['/api/v1/', 'api/v1'],
    ['/api/v1/namespaces/{namespace}/pods', 'api/v1'],
    ['/apis/', 'apis'],
    ['/apis/coordination.k8s.io/', 'apis/coordination.k8s.io'],
    ['/apis/coordination.k8s.io/v1/', 'apis/coordination.k8s.io/v1'],
    ['/apis/coordination.k8s.io/v1/watch/leases', 'apis/coordination.k8s.io/v1'],
    ['/version/', undefined],
  ];
  for (const [path, want] of cases) it(`${path} → ${want}`, () => assert.equal(v3DocumentOf(path), want));
});
