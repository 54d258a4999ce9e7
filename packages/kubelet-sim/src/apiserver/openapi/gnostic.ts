// A Swagger 2.0 document (as JSON) → gnostic's `openapi_v2.Document`, the message kube-apiserver
// serves as `/openapi/v2` protobuf: k8s.io/kube-openapi pkg/handler ToProtoBinary is
// `proto.Marshal(openapi_v2.ParseDocument(json))`, and ParseDocument (github.com/google/gnostic-models
// openapiv2, generated from the OpenAPI 2.0 JSON schema) reads the JSON as YAML nodes. This mirrors
// that compiler (OpenAPIv2.go, v0.7.x) message by message, so the bytes are the ones kube-apiserver
// would send for the same JSON:
// - a field is set when its key is present (an empty `paths: {}` is an empty Paths, not nothing);
//   maps become repeated `Named…{name, value}` in the JSON's key order; `$ref` is `_ref`;
// - `x-…` keys become `vendor_extension: NamedAny{name, value: Any{yaml}}`, and `default`, `enum`
//   and `example` values are `Any{yaml}` too, the YAML text yaml.v3 writes for the value (go-yaml.ts);
// - a oneof (Parameter, NonBodyParameter, ParametersItem, ResponseValue, SchemaItem,
//   AdditionalPropertiesItem, SecurityDefinitionsItem) tries each alternative in field order and
//   keeps the last that compiles without errors: required keys present, no unknown keys, enum-valued
//   strings (`in`, `type`, `collectionFormat`, `flow`…) in range; `in: query` is therefore a
//   QueryParameterSubSchema and `{$ref}` a JsonReference;
// - scalars are read as gnostic reads YAML scalars: a string field takes a string, an integer or
//   null (as ""); a number field an integer or a float; anything else is an error, and any error
//   fails the whole document, as ToProtoBinary does.
// kube-openapi's pkg/util/proto (what kubectl's client-side validation builds its models from)
// reads only definitions: `type` (TypeItem), `properties`, `items`, `additionalProperties`, `_ref`,
// `required`, `description`, `default` and the vendor extensions (`x-kubernetes-group-version-kind`).

import * as openapiv2 from './generated/openapiv2/OpenAPIv2.pb.js';
import { marshalYaml } from './go-yaml.js';
import type { JsonObject } from './types.js';

interface Context {
  path: string;
  errors: string[];
}
type Reader<V> = (node: unknown, ctx: Context) => V;

function isObject(node: unknown): node is JsonObject {
  return node !== null && typeof node === 'object' && !Array.isArray(node);
}

/** A mapping node's pairs; none for any other node (compiler.MapValueForKey finds nothing there). */
function pairs(node: unknown): [string, unknown][] {
  return isObject(node) ? Object.entries(node) : [];
}

function child(ctx: Context, key: string): Context {
  return { path: `${ctx.path}.${key}`, errors: ctx.errors };
}

function fail(ctx: Context, message: string): void {
  ctx.errors.push(`${ctx.path} ${message}`);
}

/** JSON number → the YAML tag yaml.v3 gives its text. */
function isIntegerText(node: number): boolean {
  return /^-?[0-9]+$/.test(JSON.stringify(node));
}

// --- scalars (compiler/helpers.go) --------------------------------------------------------------

/** StringForScalarNode: a string, an integer's text, or "" for null. */
function scalarString(node: unknown): string | undefined {
  if (typeof node === 'string') return node;
  if (node === null) return '';
  if (typeof node === 'number' && isIntegerText(node)) return JSON.stringify(node);
  return undefined;
}

const str: Reader<string> = (node, ctx) => {
  const s = scalarString(node);
  if (s === undefined) fail(ctx, `has unexpected value: ${JSON.stringify(node)}`);
  return s ?? '';
};

const bool: Reader<boolean> = (node, ctx) => {
  if (typeof node === 'boolean') return node;
  fail(ctx, `has unexpected value: ${JSON.stringify(node)}`);
  return false;
};

const float: Reader<number> = (node, ctx) => {
  if (typeof node === 'number') return node;
  fail(ctx, `has unexpected value: ${JSON.stringify(node)}`);
  return 0;
};

const int: Reader<number> = (node, ctx) => {
  if (typeof node === 'number' && isIntegerText(node)) return node;
  fail(ctx, `has unexpected value: ${JSON.stringify(node)}`);
  return 0;
};

/** A repeated string: a sequence's string-like items (others are skipped); not a sequence is an error. */
const strings: Reader<string[]> = (node, ctx) => {
  if (!Array.isArray(node)) {
    fail(ctx, `has unexpected value: ${JSON.stringify(node)}`);
    return [];
  }
  return node.map(scalarString).filter((s) => s !== undefined);
};

/** NewAny: the node as YAML text. */
const any: Reader<openapiv2.Any> = (node) => ({ value: undefined, yaml: marshalYaml(node) });

/** A repeated message field: each item of a sequence; anything else leaves it empty. */
function list<V>(item: Reader<V>): Reader<V[]> {
  return (node, ctx) => (Array.isArray(node) ? node.map((v) => item(v, ctx)) : []);
}

// --- messages ------------------------------------------------------------------------------------

interface MessageSpec<T> {
  /** By the generated field name; the JSON key is the same but for `Ref` (`$ref`). */
  fields: { [K in keyof T]?: Reader<T[K]> };
  required?: readonly string[];
  /** Values a string field must take (gnostic's "check for valid enum values"). */
  enums?: { [K in keyof T]?: readonly string[] };
  /** Whether the message has `vendor_extension` (then `x-…` keys are allowed and collected). */
  vendorExtensions?: boolean;
  /** Whether unknown keys are an error; JsonReference does not check. */
  checkKeys?: boolean;
}

const jsonKey = (field: string) => (field === 'Ref' ? '$ref' : field);

function vendorExtensions(node: unknown, ctx: Context): openapiv2.NamedAny[] {
  return pairs(node)
    .filter(([k]) => k.startsWith('x-'))
    .map(([name, v]) => ({ name, value: any(v, child(ctx, name)) }));
}

function message<T extends object>(fns: { create(): T }, spec: MessageSpec<T>): Reader<T> {
  const fields = Object.entries(spec.fields) as [string, Reader<unknown>][];
  const allowed = new Set(fields.map(([f]) => jsonKey(f)));
  return (node, ctx) => {
    const x = fns.create() as Record<string, unknown>;
    const object = isObject(node) ? node : {};
    const missing = (spec.required ?? []).filter((k) => !Object.hasOwn(object, k));
    if (missing.length > 0) fail(ctx, `is missing required properties: ${missing.join(', ')}`);
    if (isObject(node) && spec.checkKeys !== false) {
      const invalid = Object.keys(node).filter(
        (k) => !allowed.has(k) && !(spec.vendorExtensions && k.startsWith('x-')),
      );
      if (invalid.length > 0) fail(ctx, `has invalid properties: ${invalid.join(', ')}`);
    }
    for (const [field, read] of fields) {
      const key = jsonKey(field);
      if (!Object.hasOwn(object, key)) continue;
      const value = read(object[key], child(ctx, key));
      x[field] = value;
      const values = (spec.enums as Record<string, readonly string[]> | undefined)?.[field];
      const invalid = Array.isArray(value)
        ? value.some((v) => !values?.includes(String(v)))
        : !values?.includes(String(value));
      if (values && invalid) fail(ctx, `has unexpected value for ${key}: ${JSON.stringify(object[key])}`);
    }
    if (spec.vendorExtensions) x['vendorExtension'] = vendorExtensions(node, ctx);
    return x as T;
  };
}

/** A oneof: every alternative is tried in order; the last one that compiles cleanly is kept. */
function oneOf<T extends object>(
  fns: { create(): T },
  name: string,
  alternatives: { [K in keyof T]?: Reader<NonNullable<T[K]>> },
): Reader<T> {
  const tries = Object.entries(alternatives) as [string, Reader<unknown>][];
  return (node, ctx) => {
    let chosen: [string, unknown] | undefined;
    for (const [field, read] of tries) {
      const trial: Context = { path: ctx.path, errors: [] };
      const value = read(node, trial);
      if (trial.errors.length === 0) chosen = [field, value];
    }
    const x = fns.create() as Record<string, unknown>;
    if (chosen) x[chosen[0]] = chosen[1];
    else fail(ctx, `contains an invalid ${name}`);
    return x as T;
  };
}

/** A message that is a map of named values (`additional_properties`). */
function namedMap<T extends { additionalProperties: { name: string; value: V | undefined }[] }, V>(
  fns: { create(): T },
  value: Reader<V>,
): Reader<T> {
  return (node, ctx) => {
    const x = fns.create();
    x.additionalProperties = pairs(node).map(([name, v]) => ({ name, value: value(v, child(ctx, name)) }));
    return x;
  };
}

// Recursive messages are read through these declarations so the specs below can refer to them.
function schema(node: unknown, ctx: Context): openapiv2.Schema {
  return readSchema(node, ctx);
}
function primitivesItems(node: unknown, ctx: Context): openapiv2.PrimitivesItems {
  return readPrimitivesItems(node, ctx);
}

const externalDocs = message(openapiv2.ExternalDocs, {
  fields: { description: str, url: str },
  required: ['url'],
  vendorExtensions: true,
});

const xml = message(openapiv2.Xml, {
  fields: { name: str, namespace: str, prefix: str, attribute: bool, wrapped: bool },
  vendorExtensions: true,
});

const jsonReference = message(openapiv2.JsonReference, {
  fields: { Ref: str, description: str },
  required: ['$ref'],
  checkKeys: false,
});

/** NewTypeItem: one type name or a sequence of them. */
const typeItem: Reader<openapiv2.TypeItem> = (node, ctx) => {
  if (Array.isArray(node)) {
    const value: string[] = [];
    for (const v of node) {
      if (v !== null && typeof v === 'object') fail(ctx, `has unexpected value for string array element`);
      else value.push(scalarText(v));
    }
    return { value };
  }
  if (node !== null && typeof node === 'object') {
    fail(ctx, `has unexpected value for string array: ${JSON.stringify(node)}`);
    return { value: [] };
  }
  return { value: [scalarText(node)] };
};

/** A scalar node's text, as the JSON had it. */
function scalarText(node: unknown): string {
  return typeof node === 'string' ? node : JSON.stringify(node);
}

/** NewItemsItem: one schema (a tuple-typed `items` is read as a schema too, as gnostic does). */
const itemsItem: Reader<openapiv2.ItemsItem> = (node, ctx) => ({ schema: [schema(node, ctx)] });

const properties = namedMap(openapiv2.Properties, schema);

const additionalPropertiesItem = oneOf(openapiv2.AdditionalPropertiesItem, 'AdditionalPropertiesItem', {
  schema,
  boolean: (node, ctx) => {
    if (typeof node !== 'boolean') fail(ctx, 'is not a boolean');
    return node === true;
  },
});

const readSchema: Reader<openapiv2.Schema> = message(openapiv2.Schema, {
  fields: {
    Ref: str,
    format: str,
    title: str,
    description: str,
    default: any,
    multipleOf: float,
    maximum: float,
    exclusiveMaximum: bool,
    minimum: float,
    exclusiveMinimum: bool,
    maxLength: int,
    minLength: int,
    pattern: str,
    maxItems: int,
    minItems: int,
    uniqueItems: bool,
    maxProperties: int,
    minProperties: int,
    required: strings,
    enum: list(any),
    additionalProperties: additionalPropertiesItem,
    type: typeItem,
    items: itemsItem,
    allOf: list(schema),
    properties,
    discriminator: str,
    readOnly: bool,
    xml,
    externalDocs,
    example: any,
  },
  vendorExtensions: true,
});

const fileSchema = message(openapiv2.FileSchema, {
  fields: {
    format: str,
    title: str,
    description: str,
    default: any,
    required: strings,
    type: str,
    readOnly: bool,
    externalDocs,
    example: any,
  },
  required: ['type'],
  enums: { type: ['file'] },
  vendorExtensions: true,
});

/** The validation keywords PrimitivesItems, Header and the non-body parameters share. */
const primitiveFields = {
  type: str,
  format: str,
  items: primitivesItems,
  collectionFormat: str,
  default: any,
  maximum: float,
  exclusiveMaximum: bool,
  minimum: float,
  exclusiveMinimum: bool,
  maxLength: int,
  minLength: int,
  pattern: str,
  maxItems: int,
  minItems: int,
  uniqueItems: bool,
  enum: list(any),
  multipleOf: float,
};
const PRIMITIVE_TYPES = ['string', 'number', 'boolean', 'integer', 'array'] as const;
const COLLECTION_FORMATS = ['csv', 'ssv', 'tsv', 'pipes'] as const;

const readPrimitivesItems: Reader<openapiv2.PrimitivesItems> = message(openapiv2.PrimitivesItems, {
  fields: primitiveFields,
  enums: { type: PRIMITIVE_TYPES, collectionFormat: COLLECTION_FORMATS },
  vendorExtensions: true,
});

const header = message(openapiv2.Header, {
  fields: { ...primitiveFields, description: str },
  required: ['type'],
  enums: { type: PRIMITIVE_TYPES, collectionFormat: COLLECTION_FORMATS },
  vendorExtensions: true,
});

const parameterFields = { ...primitiveFields, required: bool, in: str, description: str, name: str };

const nonBodyParameter = oneOf(openapiv2.NonBodyParameter, 'NonBodyParameter', {
  headerParameterSubSchema: message(openapiv2.HeaderParameterSubSchema, {
    fields: parameterFields,
    enums: { in: ['header'], type: PRIMITIVE_TYPES, collectionFormat: COLLECTION_FORMATS },
    vendorExtensions: true,
  }),
  formDataParameterSubSchema: message(openapiv2.FormDataParameterSubSchema, {
    fields: { ...parameterFields, allowEmptyValue: bool },
    enums: {
      in: ['formData'],
      type: [...PRIMITIVE_TYPES, 'file'],
      collectionFormat: [...COLLECTION_FORMATS, 'multi'],
    },
    vendorExtensions: true,
  }),
  queryParameterSubSchema: message(openapiv2.QueryParameterSubSchema, {
    fields: { ...parameterFields, allowEmptyValue: bool },
    enums: { in: ['query'], type: PRIMITIVE_TYPES, collectionFormat: [...COLLECTION_FORMATS, 'multi'] },
    vendorExtensions: true,
  }),
  pathParameterSubSchema: message(openapiv2.PathParameterSubSchema, {
    fields: parameterFields,
    required: ['required'],
    enums: { in: ['path'], type: PRIMITIVE_TYPES, collectionFormat: COLLECTION_FORMATS },
    vendorExtensions: true,
  }),
});

const bodyParameter = message(openapiv2.BodyParameter, {
  fields: { description: str, name: str, in: str, required: bool, schema },
  required: ['in', 'name', 'schema'],
  enums: { in: ['body'] },
  vendorExtensions: true,
});

const parameter = oneOf(openapiv2.Parameter, 'Parameter', { bodyParameter, nonBodyParameter });

const parametersItem = oneOf(openapiv2.ParametersItem, 'ParametersItem', { parameter, jsonReference });

const response = message(openapiv2.Response, {
  fields: {
    description: str,
    schema: oneOf(openapiv2.SchemaItem, 'SchemaItem', { schema, fileSchema }),
    headers: namedMap(openapiv2.Headers, header),
    examples: namedMap(openapiv2.Examples, any),
  },
  required: ['description'],
  vendorExtensions: true,
});

const RESPONSE_CODE = /^([0-9]{3})$|^(default)$/;
const responseValue = oneOf(openapiv2.ResponseValue, 'ResponseValue', { response, jsonReference });

const responses: Reader<openapiv2.Responses> = (node, ctx) => {
  const invalid = pairs(node).filter(([k]) => !RESPONSE_CODE.test(k) && !k.startsWith('x-'));
  if (invalid.length > 0) fail(ctx, `has invalid properties: ${invalid.map(([k]) => k).join(', ')}`);
  return {
    responseCode: pairs(node)
      .filter(([k]) => RESPONSE_CODE.test(k))
      .map(([name, v]) => ({ name, value: responseValue(v, child(ctx, name)) })),
    vendorExtension: vendorExtensions(node, ctx),
  };
};

const SCHEMES = ['http', 'https', 'ws', 'wss'] as const;

const stringArray: Reader<openapiv2.StringArray> = (node) => ({
  value: Array.isArray(node) ? node.map((v) => scalarString(v) ?? '') : [],
});
const securityRequirement = namedMap(openapiv2.SecurityRequirement, stringArray);

const operation = message(openapiv2.Operation, {
  fields: {
    tags: strings,
    summary: str,
    description: str,
    externalDocs,
    operationId: str,
    produces: strings,
    consumes: strings,
    parameters: list(parametersItem),
    responses,
    schemes: strings,
    deprecated: bool,
    security: list(securityRequirement),
  },
  required: ['responses'],
  enums: { schemes: SCHEMES },
  vendorExtensions: true,
});

const pathItem = message(openapiv2.PathItem, {
  fields: {
    Ref: str,
    get: operation,
    put: operation,
    post: operation,
    delete: operation,
    options: operation,
    head: operation,
    patch: operation,
    parameters: list(parametersItem),
  },
  vendorExtensions: true,
});

const paths: Reader<openapiv2.Paths> = (node, ctx) => {
  const invalid = pairs(node).filter(([k]) => !k.startsWith('/') && !k.startsWith('x-'));
  if (invalid.length > 0) fail(ctx, `has invalid properties: ${invalid.map(([k]) => k).join(', ')}`);
  return {
    vendorExtension: vendorExtensions(node, ctx),
    path: pairs(node)
      .filter(([k]) => k.startsWith('/'))
      .map(([name, v]) => ({ name, value: pathItem(v, child(ctx, name)) })),
  };
};

const scopes = namedMap(openapiv2.Oauth2Scopes, str);

const securityDefinitionsItem = oneOf(openapiv2.SecurityDefinitionsItem, 'SecurityDefinitionsItem', {
  basicAuthenticationSecurity: message(openapiv2.BasicAuthenticationSecurity, {
    fields: { type: str, description: str },
    required: ['type'],
    enums: { type: ['basic'] },
    vendorExtensions: true,
  }),
  apiKeySecurity: message(openapiv2.ApiKeySecurity, {
    fields: { type: str, name: str, in: str, description: str },
    required: ['in', 'name', 'type'],
    enums: { type: ['apiKey'], in: ['header', 'query'] },
    vendorExtensions: true,
  }),
  oauth2ImplicitSecurity: message(openapiv2.Oauth2ImplicitSecurity, {
    fields: { type: str, flow: str, scopes, authorizationUrl: str, description: str },
    required: ['authorizationUrl', 'flow', 'type'],
    enums: { type: ['oauth2'], flow: ['implicit'] },
    vendorExtensions: true,
  }),
  oauth2PasswordSecurity: message(openapiv2.Oauth2PasswordSecurity, {
    fields: { type: str, flow: str, scopes, tokenUrl: str, description: str },
    required: ['flow', 'tokenUrl', 'type'],
    enums: { type: ['oauth2'], flow: ['password'] },
    vendorExtensions: true,
  }),
  oauth2ApplicationSecurity: message(openapiv2.Oauth2ApplicationSecurity, {
    fields: { type: str, flow: str, scopes, tokenUrl: str, description: str },
    required: ['flow', 'tokenUrl', 'type'],
    enums: { type: ['oauth2'], flow: ['application'] },
    vendorExtensions: true,
  }),
  oauth2AccessCodeSecurity: message(openapiv2.Oauth2AccessCodeSecurity, {
    fields: { type: str, flow: str, scopes, authorizationUrl: str, tokenUrl: str, description: str },
    required: ['authorizationUrl', 'flow', 'tokenUrl', 'type'],
    enums: { type: ['oauth2'], flow: ['accessCode'] },
    vendorExtensions: true,
  }),
});

const info = message(openapiv2.Info, {
  fields: {
    title: str,
    version: str,
    description: str,
    termsOfService: str,
    contact: message(openapiv2.Contact, {
      fields: { name: str, url: str, email: str },
      vendorExtensions: true,
    }),
    license: message(openapiv2.License, {
      fields: { name: str, url: str },
      required: ['name'],
      vendorExtensions: true,
    }),
  },
  required: ['title', 'version'],
  vendorExtensions: true,
});

const tag = message(openapiv2.Tag, {
  fields: { name: str, description: str, externalDocs },
  required: ['name'],
  vendorExtensions: true,
});

const document = message(openapiv2.Document, {
  fields: {
    swagger: str,
    info,
    host: str,
    basePath: str,
    schemes: strings,
    consumes: strings,
    produces: strings,
    paths,
    definitions: namedMap(openapiv2.Definitions, schema),
    parameters: namedMap(openapiv2.ParameterDefinitions, parameter),
    responses: namedMap(openapiv2.ResponseDefinitions, response),
    security: list(securityRequirement),
    securityDefinitions: namedMap(openapiv2.SecurityDefinitions, securityDefinitionsItem),
    tags: list(tag),
    externalDocs,
  },
  required: ['info', 'paths', 'swagger'],
  enums: { swagger: ['2.0'], schemes: SCHEMES },
  vendorExtensions: true,
});

/**
 * gnostic's openapi_v2.ParseDocument of the document's JSON. Throws with every error gnostic would
 * report (kube-apiserver then fails to serve protobuf the same way).
 */
export function gnosticDocument(swagger: object): openapiv2.Document {
  const ctx: Context = { path: '$root', errors: [] };
  const doc = document(swagger, ctx);
  if (ctx.errors.length > 0) throw new Error(`OpenAPI v2 → gnostic: ${ctx.errors.join('; ')}`);
  return doc;
}
