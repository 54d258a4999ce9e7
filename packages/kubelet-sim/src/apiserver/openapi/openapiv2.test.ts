// gnostic's OpenAPI v2 Document (generated/openapiv2, from proto/openapiv2/OpenAPIv2.proto): the
// committed code (that and generated/k8s.io) is what scripts/generate-proto.mjs writes, and it encodes what gnostic-models does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as openapiv2 from './generated/openapiv2/OpenAPIv2.pb.js';

const pkgDir = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const generated = join(pkgDir, 'src/apiserver/openapi/generated');

function listFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    return statSync(full).isDirectory() ? listFiles(full) : [full];
  });
}

test('committed protobuf code matches a fresh `npm run generate -w @plugboard/kubelet-sim`', () => {
  const out = mkdtempSync(join(tmpdir(), 'plugboard-gen-check-'));
  try {
    execFileSync(process.execPath, [join(pkgDir, 'scripts/generate-proto.mjs'), out], { stdio: 'pipe' });
    const fresh = listFiles(out)
      .map((f) => relative(out, f))
      .sort();
    assert.deepEqual(fresh, [
      'google/protobuf/any.pb.ts',
      'k8s.io/api/core/v1/generated.pb.ts',
      'k8s.io/api/resource/v1/generated.pb.ts',
      'k8s.io/apimachinery/pkg/api/resource/generated.pb.ts',
      'k8s.io/apimachinery/pkg/apis/meta/v1/generated.pb.ts',
      'k8s.io/apimachinery/pkg/runtime/generated.pb.ts',
      'k8s.io/apimachinery/pkg/runtime/schema/generated.pb.ts',
      'k8s.io/apimachinery/pkg/util/intstr/generated.pb.ts',
      'openapiv2/OpenAPIv2.pb.ts',
    ]);
    for (const file of fresh) {
      assert.equal(
        readFileSync(join(generated, file), 'utf8'),
        readFileSync(join(out, file), 'utf8'),
        `generated/${file} is stale: run npm run generate -w @plugboard/kubelet-sim`,
      );
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

test('openapiv2 (gnostic OpenAPI v2): the bytes gnostic-models writes for the same document', () => {
  // Document{swagger=1, info=2{title=1,version=2}, paths=8 (empty), definitions=9{additional_properties=1
  // NamedSchema{name=1, value=2 Schema{type=22 TypeItem{value=1}, properties=25, vendor_extension=31
  // NamedAny{name=1, value=2 Any{yaml=2}}}}}}; golden from openapi_v2.ParseDocument + proto.Marshal of
  // {"swagger":"2.0","info":{"title":"x","version":"1"},"paths":{},"definitions":{"A":{"type":"object",
  // "x-kubernetes-group-version-kind":[{"group":"","kind":"Pod","version":"v1"}],"properties":{"a":{"type":"string"}}}}}
  const doc = openapiv2.Document.fromPartial({
    swagger: '2.0',
    info: { title: 'x', version: '1' },
    paths: {},
    definitions: {
      additionalProperties: [
        {
          name: 'A',
          value: {
            type: { value: ['object'] },
            properties: { additionalProperties: [{ name: 'a', value: { type: { value: ['string'] } } }] },
            vendorExtension: [
              {
                name: 'x-kubernetes-group-version-kind',
                value: { yaml: '- group: ""\n  kind: Pod\n  version: v1\n' },
              },
            ],
          },
        },
      ],
    },
  });
  const golden =
    '0a03322e3012060a017812013142004a750a730a0141126eb201080a066f626a656374ca01120a100a0161120bb201080a06737472696e67' +
    'fa014b0a1f782d6b756265726e657465732d67726f75702d76657273696f6e2d6b696e64122812262d2067726f75703a2022220a20206b' +
    '696e643a20506f640a202076657273696f6e3a2076310a';
  const bytes = openapiv2.Document.encode(doc).finish();
  assert.equal(Buffer.from(bytes).toString('hex'), golden);
  assert.deepEqual(openapiv2.Document.decode(bytes), doc);
});
