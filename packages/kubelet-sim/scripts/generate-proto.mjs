#!/usr/bin/env node
// Regenerates the protobuf code of src/apiserver/openapi/generated from proto/ with buf + ts-proto,
// as @plugboard/proto generates its own: openapiv2/ and google/ (gnostic's OpenAPI v2 Document, the
// body of kube-apiserver's protobuf /openapi/v2; template buf.gen.yaml) and k8s.io/ (Kubernetes' own
// generated.proto files, decoded from protobuf request bodies; template buf.gen.k8s.yaml). The only
// way those folders are written; swagger.ts beside them is generate-openapi.ts's.
// Usage: node scripts/generate-proto.mjs [OUT_DIR]   (default: src/apiserver/openapi/generated; the
// staleness test passes a temp dir)
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const GENERATED = 'src/apiserver/openapi/generated';
const pkgDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = resolve(pkgDir, process.argv[2] ?? GENERATED);
const require = createRequire(import.meta.url);
const buf = join(dirname(require.resolve('@bufbuild/buf/package.json')), 'bin', 'buf');
const tsProto = join(dirname(require.resolve('ts-proto/package.json')), 'protoc-gen-ts_proto');

// Each template, pointed at the resolved plugin and a scratch dir, for the protos under its path.
const TEMPLATES = [
  { template: 'buf.gen.yaml', path: 'proto/openapiv2' },
  { template: 'buf.gen.k8s.yaml', path: 'proto/k8s.io' },
];
const scratch = mkdtempSync(join(tmpdir(), 'plugboard-gen-'));
try {
  for (const { template: name, path } of TEMPLATES) {
    const template = readFileSync(join(pkgDir, name), 'utf8')
      .replace(/local: .*protoc-gen-ts_proto/, `local: ${tsProto}`)
      .replace(`out: ${GENERATED}`, `out: ${join(scratch, 'out')}`);
    writeFileSync(join(scratch, name), template);
    execFileSync(buf, ['generate', '--template', join(scratch, name), '--path', path], {
      cwd: pkgDir,
      stdio: 'inherit',
    });
  }
  mkdirSync(outDir, { recursive: true });
  // Replace only the folders buf writes (openapiv2/, google/, k8s.io/); swagger.ts and README.md stay.
  for (const name of readdirSync(join(scratch, 'out'))) {
    rmSync(join(outDir, name), { recursive: true, force: true });
    cpSync(join(scratch, 'out', name), join(outDir, name), { recursive: true });
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
