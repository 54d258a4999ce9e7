import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { convertPathItem, convertSchema, convertSecurityScheme } from './convert.js';

describe('convertSchema (kube-openapi openapiconv)', () => {
  it('points refs at components/schemas; a bare ref stays bare', () => {
    assert.deepEqual(convertSchema({ $ref: '#/definitions/io.k8s.api.core.v1.Container' }), {
      $ref: '#/components/schemas/io.k8s.api.core.v1.Container',
    });
  });

  it('wraps a ref that has siblings in allOf (builder3 WrapRefs)', () => {
    assert.deepEqual(
      convertSchema({
        description: 'If specified, the pod’s scheduling constraints',
        $ref: '#/definitions/io.k8s.api.core.v1.Affinity',
      }),
      {
        description: 'If specified, the pod’s scheduling constraints',
        allOf: [{ $ref: '#/components/schemas/io.k8s.api.core.v1.Affinity' }],
      },
    );
  });

  it('converts nested schemas and keeps vendor extensions', () => {
    const v2 = {
      type: 'object',
      properties: {
        containers: {
          type: 'array',
          items: { default: {}, $ref: '#/definitions/io.k8s.api.core.v1.Container' },
          'x-kubernetes-patch-merge-key': 'name',
        },
        labels: { type: 'object', additionalProperties: { type: 'string', default: '' } },
        owner: { additionalProperties: { $ref: '#/definitions/X' } },
      },
      'x-kubernetes-group-version-kind': [{ group: '', kind: 'Pod', version: 'v1' }],
    };
    assert.deepEqual(convertSchema(v2), {
      type: 'object',
      properties: {
        containers: {
          type: 'array',
          items: { default: {}, allOf: [{ $ref: '#/components/schemas/io.k8s.api.core.v1.Container' }] },
          'x-kubernetes-patch-merge-key': 'name',
        },
        labels: { type: 'object', additionalProperties: { type: 'string', default: '' } },
        owner: { additionalProperties: { $ref: '#/components/schemas/X' } },
      },
      'x-kubernetes-group-version-kind': [{ group: '', kind: 'Pod', version: 'v1' }],
    });
  });
});

describe('convertPathItem', () => {
  const shared = {
    'pretty-tJGM1-ng': {
      description: 'pretty',
      in: 'query',
      name: 'pretty',
      type: 'string',
      uniqueItems: true,
    },
    'body-X': { in: 'body', name: 'body', required: true, schema: { $ref: '#/definitions/Opts' } },
  };

  it('turns the body into requestBody per consumes type, responses into content per produces type', () => {
    const item = convertPathItem(
      {
        post: {
          consumes: ['*/*'],
          produces: ['application/json', 'application/yaml'],
          schemes: ['https'],
          description: 'create a Pod',
          operationId: 'createCoreV1NamespacedPod',
          tags: ['core_v1'],
          parameters: [
            { in: 'body', name: 'body', required: true, schema: { $ref: '#/definitions/Pod' } },
            { in: 'query', name: 'dryRun', description: 'dry', type: 'string', uniqueItems: true },
          ],
          responses: {
            '200': { description: 'OK', schema: { $ref: '#/definitions/Pod' } },
            '401': { description: 'Unauthorized' },
          },
          'x-kubernetes-action': 'post',
          'x-kubernetes-group-version-kind': { group: '', kind: 'Pod', version: 'v1' },
        },
        parameters: [{ $ref: '#/parameters/pretty-tJGM1-ng' }],
      },
      shared,
    );
    assert.deepEqual(item, {
      post: {
        tags: ['core_v1'],
        description: 'create a Pod',
        operationId: 'createCoreV1NamespacedPod',
        requestBody: { content: { '*/*': { schema: { $ref: '#/components/schemas/Pod' } } } },
        parameters: [
          { name: 'dryRun', in: 'query', description: 'dry', schema: { type: 'string', uniqueItems: true } },
        ],
        responses: {
          '200': {
            description: 'OK',
            content: {
              'application/json': { schema: { $ref: '#/components/schemas/Pod' } },
              'application/yaml': { schema: { $ref: '#/components/schemas/Pod' } },
            },
          },
          '401': { description: 'Unauthorized' },
        },
        'x-kubernetes-action': 'post',
        'x-kubernetes-group-version-kind': { group: '', kind: 'Pod', version: 'v1' },
      },
      // `#/parameters/` refs are inlined (kube-apiserver's v3 documents have no components.parameters).
      parameters: [
        { name: 'pretty', in: 'query', description: 'pretty', schema: { type: 'string', uniqueItems: true } },
      ],
    });
  });

  it('resolves a shared body parameter into requestBody, and keeps required path parameters', () => {
    const item = convertPathItem(
      {
        delete: {
          consumes: ['application/json'],
          parameters: [{ $ref: '#/parameters/body-X' }],
          responses: {},
        },
        parameters: [{ in: 'path', name: 'name', required: true, type: 'string', uniqueItems: true }],
      },
      shared,
    );
    assert.deepEqual(item, {
      delete: {
        requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Opts' } } } },
        responses: {},
      },
      parameters: [
        { name: 'name', in: 'path', required: true, schema: { type: 'string', uniqueItems: true } },
      ],
    });
  });

  it('fails on a dangling parameter ref', () => {
    assert.throws(() => convertPathItem({ parameters: [{ $ref: '#/parameters/nope' }] }, shared), /dangling/);
  });
});

describe('convertSecurityScheme', () => {
  it("keeps Kubernetes' BearerToken API key", () => {
    assert.deepEqual(
      convertSecurityScheme({
        description: 'Bearer Token authentication',
        in: 'header',
        name: 'authorization',
        type: 'apiKey',
      }),
      { type: 'apiKey', description: 'Bearer Token authentication', name: 'authorization', in: 'header' },
    );
  });
});
