// Protobuf request bodies as a real Go client writes them (test/fixtures/protobuf, written by
// scripts/protobuf-fixtures with k8s.io/apimachinery's protobuf serializer), decoded into exactly the
// JSON the API server keeps for the same object (encoding/json of the same typed Go object).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { HttpError } from './http.js';
import { decodeProtobufObject } from './protobuf.js';

interface Fixture {
  name: string;
  protobuf: string;
  json: Record<string, unknown>;
}

const fixtures = JSON.parse(
  readFileSync(new URL('../../test/fixtures/protobuf/resource-v1.json', import.meta.url), 'utf8'),
) as Fixture[];

describe('protobuf request bodies', () => {
  it('has a fixture of each kind decoded whole', () => {
    assert.deepEqual(
      fixtures.map((f) => f.json['kind']),
      ['ResourceSlice', 'ResourceClaim'],
    );
  });

  for (const fixture of fixtures) {
    it(`${fixture.name}: decodes to the JSON Go encodes for the same object`, () => {
      assert.deepEqual(decodeProtobufObject(Buffer.from(fixture.protobuf, 'base64')), fixture.json);
    });
  }

  it('keeps a zero its pointer field holds (an int attribute of 0), and drops a value field’s zero', () => {
    const slice = decodeProtobufObject(Buffer.from(fixtures[0]!.protobuf, 'base64')) as {
      metadata: Record<string, unknown>;
      spec: { pool: Record<string, unknown>; devices: { attributes: Record<string, unknown> }[] };
    };
    assert.deepEqual(slice.spec.devices[0]!.attributes['index'], { int: 0 });
    assert.deepEqual(slice.spec.devices[0]!.attributes['example.com/virtual'], { bool: false });
    assert.equal(slice.spec.pool['generation'], 0, 'required: kept at 0');
    assert.equal('generation' in slice.metadata, false, 'ObjectMeta.generation is omitempty');
  });

  it('answers 400 for a body that is not valid protobuf, naming the kind when it got that far', () => {
    const good = Buffer.from(fixtures[0]!.protobuf, 'base64');
    // Cut short: the envelope's `raw` runs past the end.
    assert.throws(
      () => decodeProtobufObject(good.subarray(0, good.length - 20)),
      (err: unknown) =>
        err instanceof HttpError && err.status === 400 && /not valid protobuf/.test(err.message),
    );
    // A whole envelope around a broken ResourceSlice: metadata { name: 5 bytes, of which none follow }.
    const typeMeta = good.subarray(4, 4 + 2 + good[5]!);
    const broken = Buffer.concat([
      good.subarray(0, 4),
      typeMeta,
      Buffer.from([0x12, 0x04, 0x0a, 0x02, 0x0a, 0x05]),
    ]);
    assert.throws(
      () => decodeProtobufObject(broken),
      (err: unknown) => err instanceof HttpError && err.status === 400 && /ResourceSlice/.test(err.message),
    );
  });

  it('answers 415 for a kind it does not decode', () => {
    const body = Buffer.concat([
      Buffer.from('k8s\0', 'binary'),
      // Unknown { typeMeta { apiVersion "v1", kind "Pod" } }
      Buffer.from([0x0a, 0x09, 0x0a, 0x02, 0x76, 0x31, 0x12, 0x03, 0x50, 0x6f, 0x64]),
    ]);
    assert.throws(
      () => decodeProtobufObject(body),
      (err: unknown) => err instanceof HttpError && err.status === 415,
    );
  });
});
