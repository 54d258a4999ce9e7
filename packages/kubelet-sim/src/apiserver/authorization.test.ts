import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BinaryWriter } from '@bufbuild/protobuf/wire';
import { selfSubjectAccessReview, selfSubjectRulesReview } from './authorization.js';
import { HttpError } from './http.js';
import { decodeProtobufObject } from './protobuf.js';

const ssar = (attrs: Record<string, string>) => ({
  apiVersion: 'authorization.k8s.io/v1',
  kind: 'SelfSubjectAccessReview',
  spec: { resourceAttributes: attrs },
});
const allowed = (attrs: Record<string, string>, mayWrite: boolean) =>
  (selfSubjectAccessReview(ssar(attrs), { mayWrite })['status'] as { allowed: boolean }).allowed;

test('access reviews say yes exactly to what the slice serves', () => {
  for (const mayWrite of [true, false]) {
    assert.equal(allowed({ verb: 'list', resource: 'pods' }, mayWrite), true);
    assert.equal(
      allowed({ verb: 'watch', resource: 'leases', group: 'coordination.k8s.io' }, mayWrite),
      true,
    );
    assert.equal(allowed({ verb: 'get', resource: 'pods', subresource: 'log' }, mayWrite), true);
    assert.equal(allowed({ verb: 'patch', resource: 'pods' }, mayWrite), false);
    assert.equal(allowed({ verb: 'patch', resource: 'nodes' }, mayWrite), false);
    assert.equal(allowed({ verb: 'list', resource: 'deployments', group: 'apps' }, mayWrite), false);
    assert.equal(
      allowed({ verb: 'list', resource: 'leases' }, mayWrite),
      false,
      'leases are not in the core group',
    );
  }
  // Writes the server lets through only with the control token.
  assert.equal(allowed({ verb: 'create', resource: 'events' }, true), true);
  assert.equal(allowed({ verb: 'create', resource: 'events' }, false), false);
  assert.equal(allowed({ verb: 'delete', resource: 'pods' }, true), true);
  assert.equal(allowed({ verb: 'delete', resource: 'pods' }, false), false);
  assert.equal(allowed({ verb: 'get', resource: 'pods', subresource: 'proxy' }, false), false);
  const denied = selfSubjectAccessReview(ssar({ verb: 'create', resource: 'events' }), { mayWrite: false });
  assert.match((denied['status'] as { reason: string }).reason, /control token/);
});

test('non-resource reviews: discovery, OpenAPI and health paths are readable', () => {
  const review = (path: string, verb = 'get') =>
    (
      selfSubjectAccessReview({ spec: { nonResourceAttributes: { path, verb } } }, { mayWrite: false })[
        'status'
      ] as { allowed: boolean }
    ).allowed;
  assert.equal(review('/openapi/v3/api/v1'), true);
  assert.equal(review('/healthz'), true);
  assert.equal(review('/metrics'), false);
  assert.equal(review('/healthz', 'post'), false);
});

test('a review without exactly one kind of attributes is invalid (422)', () => {
  assert.throws(
    () => selfSubjectAccessReview({ spec: {} }, { mayWrite: true }),
    (err: unknown) => err instanceof HttpError && err.status === 422,
  );
  assert.throws(
    () => selfSubjectAccessReview('nope', { mayWrite: true }),
    (err: unknown) => err instanceof HttpError && err.status === 400,
  );
});

test('rules reviews list the reads for everyone and the writes with the token', () => {
  const rules = (mayWrite: boolean) =>
    (
      selfSubjectRulesReview({ spec: { namespace: 'default' } }, { mayWrite })['status'] as {
        resourceRules: { verbs: string[]; apiGroups: string[]; resources: string[] }[];
      }
    ).resourceRules;
  const verbsOf = (mayWrite: boolean, resource: string) =>
    rules(mayWrite)
      .filter((r) => r.resources.includes(resource))
      .flatMap((r) => r.verbs)
      .sort();
  assert.deepEqual(verbsOf(false, 'events'), ['get', 'list', 'watch']);
  assert.deepEqual(verbsOf(true, 'events'), ['create', 'get', 'list', 'watch']);
  assert.deepEqual(verbsOf(false, 'pods/proxy'), []);
  assert.deepEqual(verbsOf(false, 'selfsubjectaccessreviews'), ['create']);
});

test('a protobuf SelfSubjectAccessReview (as kubectl sends it) decodes to the JSON the review reads', () => {
  const attrs = new BinaryWriter()
    .uint32(10)
    .string('default')
    .uint32(18)
    .string('list')
    .uint32(42)
    .string('pods');
  const spec = new BinaryWriter().uint32(10).bytes(attrs.finish());
  const raw = new BinaryWriter().uint32(10).bytes(new Uint8Array()).uint32(18).bytes(spec.finish());
  const typeMeta = new BinaryWriter()
    .uint32(10)
    .string('authorization.k8s.io/v1')
    .uint32(18)
    .string('SelfSubjectAccessReview');
  const unknown = new BinaryWriter().uint32(10).bytes(typeMeta.finish()).uint32(18).bytes(raw.finish());
  const body = Buffer.concat([Buffer.from('k8s\0', 'latin1'), Buffer.from(unknown.finish())]);
  const obj = decodeProtobufObject(body);
  assert.deepEqual(obj['spec'], {
    resourceAttributes: { namespace: 'default', verb: 'list', resource: 'pods' },
  });
  assert.equal(obj['kind'], 'SelfSubjectAccessReview');
  assert.equal(
    allowed((obj['spec'] as { resourceAttributes: Record<string, string> }).resourceAttributes, false),
    true,
  );
  assert.throws(
    () => decodeProtobufObject(Buffer.from('not protobuf')),
    (err: unknown) => err instanceof HttpError && err.status === 400,
  );
});
