// Request bodies in Kubernetes' protobuf encoding (k8s.io/apimachinery runtime/serializer/protobuf):
// the 4-byte magic `k8s\0`, then a runtime.Unknown { typeMeta (1) { apiVersion (1), kind (2) },
// raw (2), contentEncoding (3), contentType (4) } whose `raw` is the object in the kind's
// generated.proto. kubectl's typed clients send protobuf for built-in kinds (`auth can-i` posts
// its SelfSubjectAccessReview that way), so the slice decodes the kinds it accepts in writes and
// answers in JSON, which the client's Accept allows. Field numbers are authorization/v1's
// generated.proto.

import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';
import type { IncomingMessage } from 'node:http';
import { HttpError, readBody, readJson } from './http.js';

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

/** The object in a protobuf request body, as the JSON the rest of the slice reads. */
export function decodeProtobufObject(body: Buffer): Record<string, unknown> {
  if (body.length < 4 || !body.subarray(0, 4).equals(MAGIC))
    throw new HttpError(400, 'BadRequest', 'the body of the request was in an unknown format');
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
