import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import * as openapiv2 from './generated/openapiv2/OpenAPIv2.pb.js';
import { swagger } from './generated/swagger.js';
import { gnosticDocument } from './gnostic.js';
import { marshalYaml } from './go-yaml.js';
import type { JsonObject } from './types.js';

const fixtures = new URL('../../../test/fixtures/openapi-v2/', import.meta.url);
const fixture = JSON.parse(readFileSync(new URL('swagger.json', fixtures), 'utf8')) as JsonObject;
/** gnostic-models' own ParseDocument + proto.Marshal of swagger.json (see the fixtures' README). */
const golden = readFileSync(new URL('swagger.pb', fixtures));

const encode = (doc: object) => Buffer.from(openapiv2.Document.encode(gnosticDocument(doc)).finish());

/** A schema message back as JSON, `Any` values as their YAML text. */
function schemaJson(s: openapiv2.Schema): JsonObject {
  const out: JsonObject = {};
  const set = (key: string, value: unknown, present: boolean) => {
    if (present) out[key] = value;
  };
  set('$ref', s.Ref, s.Ref !== '');
  for (const key of ['format', 'title', 'description', 'pattern', 'discriminator'] as const)
    set(key, s[key], s[key] !== '');
  for (const key of [
    'multipleOf',
    'maximum',
    'minimum',
    'maxLength',
    'minLength',
    'maxItems',
    'minItems',
    'maxProperties',
    'minProperties',
  ] as const)
    set(key, s[key], s[key] !== 0);
  for (const key of ['exclusiveMaximum', 'exclusiveMinimum', 'uniqueItems', 'readOnly'] as const)
    set(key, s[key], s[key]);
  set('default', s.default?.yaml, s.default !== undefined);
  set('example', s.example?.yaml, s.example !== undefined);
  set('required', s.required, s.required.length > 0);
  set(
    'enum',
    s.enum.map((e) => e.yaml),
    s.enum.length > 0,
  );
  const types = s.type?.value ?? [];
  set('type', types.length === 1 ? types[0] : types, s.type !== undefined);
  set('items', s.items?.schema.map(schemaJson)[0], s.items !== undefined);
  set('allOf', s.allOf.map(schemaJson), s.allOf.length > 0);
  set(
    'properties',
    Object.fromEntries((s.properties?.additionalProperties ?? []).map((p) => [p.name, schemaJson(p.value!)])),
    s.properties !== undefined,
  );
  const additional = s.additionalProperties;
  set(
    'additionalProperties',
    additional?.schema ? schemaJson(additional.schema) : additional?.boolean,
    additional !== undefined,
  );
  for (const ext of s.vendorExtension) out[ext.name] = ext.value?.yaml;
  return out;
}

/** The JSON schema with every `Any` value (`default`, `enum`, `example`, `x-…`) as gnostic's YAML. */
function withYamlValues(schema: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'default' || key === 'example' || key.startsWith('x-')) out[key] = marshalYaml(value);
    else if (key === 'enum') out[key] = (value as unknown[]).map(marshalYaml);
    else if (key === 'properties')
      out[key] = Object.fromEntries(
        Object.entries(value as Record<string, JsonObject>).map(([k, v]) => [k, withYamlValues(v)]),
      );
    else if (key === 'items' || (key === 'additionalProperties' && typeof value === 'object'))
      out[key] = withYamlValues(value as JsonObject);
    else if (key === 'allOf') out[key] = (value as JsonObject[]).map(withYamlValues);
    else out[key] = value;
  }
  return out;
}

describe('gnosticDocument: Swagger JSON → openapi_v2.Document, as gnostic compiles it', () => {
  it("encodes the fixture to gnostic-models' own bytes", () => {
    const bytes = encode(fixture);
    assert.equal(bytes.length, golden.length);
    assert.ok(bytes.equals(golden), 'byte-identical to ParseDocument + proto.Marshal');
  });

  it('picks the oneof alternative gnostic picks', () => {
    const doc = openapiv2.Document.decode(golden);
    const item = doc.paths!.path.find((p) => p.name === '/things/{name}')!.value!;
    assert.equal(item.parameters[0]?.jsonReference?.Ref, '#/parameters/pretty');
    assert.equal(item.parameters[1]?.parameter?.nonBodyParameter?.pathParameterSubSchema?.name, 'name');
    const [limit, tags, trace, upload, body] = item.get!.parameters.map((p) => p.parameter);
    const query = limit?.nonBodyParameter?.queryParameterSubSchema;
    assert.deepEqual([query?.type, query?.maximum, query?.default?.yaml], ['integer', 500.5, '10\n']);
    assert.equal(tags?.nonBodyParameter?.queryParameterSubSchema?.items?.items?.type, 'integer');
    assert.equal(trace?.nonBodyParameter?.headerParameterSubSchema?.vendorExtension[0]?.value?.yaml, 'v\n');
    assert.equal(upload?.nonBodyParameter?.formDataParameterSubSchema?.type, 'file');
    assert.equal(body?.bodyParameter?.schema?.Ref, '#/definitions/Thing');
    const responses = Object.fromEntries(item.get!.responses!.responseCode.map((r) => [r.name, r.value]));
    assert.deepEqual(Object.keys(responses), ['200', '204', '404', 'default']);
    assert.equal(responses['200']?.response?.schema?.schema?.Ref, '#/definitions/Thing');
    assert.equal(responses['204']?.response?.schema?.fileSchema?.type, 'file');
    assert.equal(responses['404']?.jsonReference?.Ref, '#/responses/NotFound');
    const thing = doc.definitions!.additionalProperties.find((d) => d.name === 'Thing')!.value!;
    const props = Object.fromEntries(thing.properties!.additionalProperties.map((p) => [p.name, p.value!]));
    assert.equal(props['open']?.additionalProperties?.boolean, true);
    assert.equal(props['closed']?.additionalProperties?.boolean, false);
    assert.equal(props['labels']?.additionalProperties?.schema?.type?.value[0], 'string');
    assert.deepEqual(props['either']?.type?.value, ['string', 'null']);
    const security = doc.securityDefinitions!.additionalProperties.map(
      (s) => Object.entries(s.value!).find(([, v]) => v !== undefined)?.[0],
    );
    assert.deepEqual(security, [
      'apiKeySecurity',
      'basicAuthenticationSecurity',
      'oauth2ImplicitSecurity',
      'oauth2PasswordSecurity',
      'oauth2ApplicationSecurity',
      'oauth2AccessCodeSecurity',
    ]);
  });

  it('keeps an empty map present (`paths: {}` is an empty Paths)', () => {
    const doc = { swagger: '2.0', info: { title: 't', version: '1' }, paths: {} };
    // Field 8 (paths), length 0: what gnostic writes.
    assert.ok(encode(doc).includes(Buffer.from([0x42, 0x00])));
    assert.deepEqual(gnosticDocument(doc).paths, { vendorExtension: [], path: [] });
  });

  it('fails the document where gnostic reports an error', () => {
    const base = { swagger: '2.0', info: { title: 't', version: '1' }, paths: {} };
    const cases: [object, RegExp][] = [
      [{ ...base, swagger: '3.0' }, /\$root has unexpected value for swagger/],
      [
        { ...base, definitions: { A: { type: 'object', bogus: 1 } } },
        /definitions\.A has invalid properties: bogus/,
      ],
      [{ ...base, paths: { '/a': { get: {} } } }, /\/a\.get is missing required properties: responses/],
      [
        {
          ...base,
          paths: {
            '/a': { get: { responses: {}, parameters: [{ name: 'c', in: 'cookie', type: 'string' }] } },
          },
        },
        /contains an invalid ParametersItem/,
      ],
      [{ ...base, definitions: { A: { description: 1.5 } } }, /A\.description has unexpected value: 1\.5/],
      [{ info: base.info }, /is missing required properties: paths, swagger/],
    ];
    for (const [doc, message] of cases) assert.throws(() => gnosticDocument(doc), message);
  });

  it('round-trips every Kubernetes definition the slice carries', () => {
    const doc = gnosticDocument(swagger);
    const names = doc.definitions!.additionalProperties.map((d) => d.name);
    assert.deepEqual(names, Object.keys(swagger.definitions), 'in the JSON order');
    for (const { name, value } of doc.definitions!.additionalProperties)
      assert.deepEqual(schemaJson(value!), withYamlValues(swagger.definitions[name]!), name);
  });
});
