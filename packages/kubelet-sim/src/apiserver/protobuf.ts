// Request bodies in Kubernetes' protobuf encoding (k8s.io/apimachinery runtime/serializer/protobuf):
// the 4-byte magic `k8s\0`, then a runtime.Unknown { typeMeta (1) { apiVersion (1), kind (2) },
// raw (2), contentEncoding (3), contentType (4) } whose `raw` is the object in the kind's
// generated.proto. client-go's typed clients send built-in kinds as protobuf and never fall back to
// JSON (kubectl's `auth can-i` posts its SelfSubjectAccessReview that way; a Go DRA driver's
// resourceslice controller creates and updates ResourceSlices that way), so the slice decodes the
// kinds it accepts in writes and answers in JSON, which the client's Accept allows.
// - SelfSubject*Reviews: their `spec` only, by authorization/v1's field numbers (below).
// - ResourceSlice and ResourceClaim (resource.k8s.io/v1): decoded whole with the code ts-proto
//   generates from upstream's own generated.proto files (proto/k8s.io, verbatim), then turned into
//   the JSON kube-apiserver would store (kubernetesJson).

import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';
import type { IncomingMessage } from 'node:http';
import { HttpError, readBody, readJson } from './http.js';
import { ResourceClaim, ResourceSlice } from './openapi/generated/k8s.io/api/resource/v1/generated.pb.js';
import { swagger } from './openapi/generated/swagger.js';

export const PROTOBUF_CONTENT_TYPE = 'application/vnd.kubernetes.protobuf';
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

type Schema = { [field: number]: { name: string; type: 'string' | Schema } };

const RESOURCE_ATTRIBUTES: Schema = {
  1: { name: 'namespace', type: 'string' },
  2: { name: 'verb', type: 'string' },
  3: { name: 'group', type: 'string' },
  4: { name: 'version', type: 'string' },
  5: { name: 'resource', type: 'string' },
  6: { name: 'subresource', type: 'string' },
  7: { name: 'name', type: 'string' },
};
const NON_RESOURCE_ATTRIBUTES: Schema = {
  1: { name: 'path', type: 'string' },
  2: { name: 'verb', type: 'string' },
};

/** Top-level `spec` (field 2) of the kinds the slice accepts as protobuf. */
const SPECS: Record<string, Schema> = {
  SelfSubjectAccessReview: {
    1: { name: 'resourceAttributes', type: RESOURCE_ATTRIBUTES },
    2: { name: 'nonResourceAttributes', type: NON_RESOURCE_ATTRIBUTES },
  },
  SelfSubjectRulesReview: { 1: { name: 'namespace', type: 'string' } },
};

function decode(bytes: Uint8Array, schema: Schema): Record<string, unknown> {
  const r = new BinaryReader(bytes);
  const out: Record<string, unknown> = {};
  while (r.pos < r.len) {
    const [no, wire] = r.tag();
    const field = schema[no];
    if (!field || wire !== WireType.LengthDelimited) {
      r.skip(wire);
      continue;
    }
    out[field.name] = field.type === 'string' ? r.string() : decode(r.bytes(), field.type);
  }
  return out;
}

/** The kinds decoded whole, by `apiVersion kind`. */
const MESSAGES: Record<string, { decode(bytes: Uint8Array): unknown }> = {
  'resource.k8s.io/v1 ResourceSlice': ResourceSlice,
  'resource.k8s.io/v1 ResourceClaim': ResourceClaim,
};

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';

/**
 * Value (not pointer) number fields whose JSON tag has omitempty, by message and field (from
 * k8s.io/api resource/v1 and apimachinery meta/v1 types.go): gogo-protobuf writes a value field even
 * when zero, a pointer only when set, so a zero on the wire is kept unless it is one of these.
 */
const OMITEMPTY_VALUES = new Set([
  `${META}.ObjectMeta.generation`,
  `${META}.Condition.observedGeneration`,
  'k8s.io.api.resource.v1.ExactDeviceRequest.count',
  'k8s.io.api.resource.v1.DeviceSubRequest.count',
]);

interface Definition {
  /** Its JSON properties; undefined when upstream's OpenAPI has no definition for it. */
  properties?: ReadonlySet<string>;
  required: ReadonlySet<string>;
}

/**
 * What upstream's OpenAPI says of a message's `$type`: its properties (a message field that is not
 * one is a Go struct embedded inline, whose fields JSON lifts into the parent) and the fields it
 * requires (kept even when empty).
 */
function definition(type: string): Definition {
  let def = DEFINITIONS.get(type);
  if (!def) {
    // k8s.io.api.resource.v1.ResourcePool → io.k8s.api.resource.v1.ResourcePool
    const schema = swagger.definitions[`io.${type.replace(/^k8s\.io\./, 'k8s.')}`];
    const properties = schema?.['properties'];
    const required = schema?.['required'];
    def = {
      ...(properties && typeof properties === 'object'
        ? { properties: new Set(Object.keys(properties)) }
        : {}),
      required: new Set(Array.isArray(required) ? (required as string[]) : []),
    };
    DEFINITIONS.set(type, def);
  }
  return def;
}
const DEFINITIONS = new Map<string, Definition>();

function rfc3339(seconds: number, nanos: number, fractionDigits: number): string {
  const base = new Date(seconds * 1000).toISOString().slice(0, 19);
  if (fractionDigits === 0) return `${base}Z`;
  return `${base}.${String(nanos).padStart(9, '0').slice(0, fractionDigits)}Z`;
}

function parseRaw(raw: Uint8Array | undefined, what: string): unknown {
  if (!raw || raw.length === 0) return undefined;
  try {
    return JSON.parse(Buffer.from(raw).toString('utf8')) as unknown;
  } catch {
    throw new HttpError(400, 'BadRequest', `${what} is not JSON`);
  }
}

type Message = Record<string, unknown> & { $type?: string };

const isZeroTime = (t: Message): boolean => t['seconds'] === undefined && t['nanos'] === undefined;

/**
 * A decoded message as Kubernetes' JSON: Quantity → its string, Time → RFC 3339 (MicroTime with
 * microseconds), RawExtension and FieldsV1 → the JSON they carry, IntOrString → number or string,
 * bytes → base64; unset fields, empty strings, lists and maps omitted (omitempty) unless the
 * OpenAPI definition requires the field. Undefined when the value is omitted.
 */
export function kubernetesJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(kubernetesJson);
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (value === null || typeof value !== 'object') return value;
  const msg = value as Message;
  switch (msg.$type) {
    case 'k8s.io.apimachinery.pkg.api.resource.Quantity':
      return msg['string'];
    // Go writes the zero time as an empty message, and its JSON omits it.
    case `${META}.Time`:
      return isZeroTime(msg) ? undefined : rfc3339(Number(msg['seconds'] ?? 0), 0, 0);
    case `${META}.MicroTime`:
      return isZeroTime(msg) ? undefined : rfc3339(Number(msg['seconds'] ?? 0), Number(msg['nanos'] ?? 0), 6);
    case 'k8s.io.apimachinery.pkg.runtime.RawExtension':
      return parseRaw(msg['raw'] as Uint8Array | undefined, 'a RawExtension');
    case `${META}.FieldsV1`:
      return parseRaw(msg['Raw'] as Uint8Array | undefined, 'a FieldsV1');
    case 'k8s.io.apimachinery.pkg.util.intstr.IntOrString':
      return msg['type'] === 1 ? msg['strVal'] : msg['intVal'];
  }
  if (msg.$type === undefined) {
    // A map: every entry stays, whatever its value.
    return Object.fromEntries(Object.entries(msg).map(([k, v]) => [k, kubernetesJson(v)]));
  }
  const { properties, required } = definition(msg.$type);
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(msg)) {
    if (key === '$type' || field === undefined) continue;
    const v = kubernetesJson(field);
    const inline =
      properties !== undefined &&
      !properties.has(key) &&
      typeof field === 'object' &&
      field !== null &&
      '$type' in field;
    if (inline) {
      if (typeof v === 'object' && v !== null) Object.assign(out, v);
      continue;
    }
    if (v === undefined) continue;
    const empty =
      v === '' ||
      (Array.isArray(v) && v.length === 0) ||
      (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0) ||
      (v === 0 && OMITEMPTY_VALUES.has(`${msg.$type}.${key}`));
    if (empty && !required.has(key)) continue;
    out[key] = v;
  }
  return out;
}

/** The object in a protobuf request body, as the JSON the rest of the slice reads. */
export function decodeProtobufObject(body: Buffer): Record<string, unknown> {
  if (body.length < 4 || !body.subarray(0, 4).equals(MAGIC))
    throw new HttpError(400, 'BadRequest', 'the body of the request was in an unknown format');
  try {
    return decodeEnvelope(body);
  } catch (err) {
    if (err instanceof HttpError) throw err;
    throw new HttpError(
      400,
      'BadRequest',
      `the request body is not valid protobuf: ${(err as Error).message}`,
    );
  }
}

function decodeEnvelope(body: Buffer): Record<string, unknown> {
  const unknown = new BinaryReader(body.subarray(4));
  let apiVersion = '';
  let kind = '';
  let raw: Uint8Array = new Uint8Array();
  while (unknown.pos < unknown.len) {
    const [no, wire] = unknown.tag();
    if (no === 1 && wire === WireType.LengthDelimited) {
      const t = decode(unknown.bytes(), {
        1: { name: 'apiVersion', type: 'string' },
        2: { name: 'kind', type: 'string' },
      });
      apiVersion = typeof t['apiVersion'] === 'string' ? t['apiVersion'] : '';
      kind = typeof t['kind'] === 'string' ? t['kind'] : '';
    } else if (no === 2 && wire === WireType.LengthDelimited) raw = unknown.bytes();
    else unknown.skip(wire);
  }
  const message = MESSAGES[`${apiVersion} ${kind}`];
  if (message) {
    let decoded: unknown;
    try {
      decoded = message.decode(raw);
    } catch (err) {
      throw new HttpError(
        400,
        'BadRequest',
        `the ${kind} in the request body is not valid protobuf: ${(err as Error).message}`,
      );
    }
    return { apiVersion, kind, ...(kubernetesJson(decoded) as Record<string, unknown>) };
  }
  const spec = SPECS[kind];
  if (!spec) {
    throw new HttpError(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: application/json`,
    );
  }
  const r = new BinaryReader(raw);
  let specObj: Record<string, unknown> = {};
  while (r.pos < r.len) {
    const [no, wire] = r.tag();
    if (no === 2 && wire === WireType.LengthDelimited) specObj = decode(r.bytes(), spec);
    else r.skip(wire);
  }
  return { apiVersion, kind, metadata: {}, spec: specObj };
}

/** A Kubernetes object from a JSON or (for the kinds above) protobuf request body. */
export async function readObject(req: IncomingMessage): Promise<unknown> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
  if (type === PROTOBUF_CONTENT_TYPE) return decodeProtobufObject(await readBody(req));
  return readJson(req);
}
