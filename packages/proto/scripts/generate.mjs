#!/usr/bin/env node
// Regenerates src/gen from proto/ with buf + ts-proto. The only way src/gen is written.
// Usage: node scripts/generate.mjs [OUT_DIR]   (default: src/gen; the staleness test passes a temp dir)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, cpSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const pkgDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = resolve(pkgDir, process.argv[2] ?? 'src/gen');
const require = createRequire(import.meta.url);
const buf = join(dirname(require.resolve('@bufbuild/buf/package.json')), 'bin', 'buf');
const tsProto = join(dirname(require.resolve('ts-proto/package.json')), 'protoc-gen-ts_proto');

// Write a buf.gen template that points at the resolved plugin, into a scratch dir.
const scratch = mkdtempSync(join(tmpdir(), 'plugboard-gen-'));
try {
  const template = readFileSync(join(pkgDir, 'buf.gen.yaml'), 'utf8')
    .replace(/local: .*protoc-gen-ts_proto/, `local: ${tsProto}`)
    .replace(/out: src\/gen/, `out: ${join(scratch, 'out')}`);
  writeFileSync(join(scratch, 'buf.gen.yaml'), template);
  execFileSync(buf, ['generate', '--template', join(scratch, 'buf.gen.yaml')], {
    cwd: pkgDir,
    stdio: 'inherit',
  });
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  cpSync(join(scratch, 'out'), outDir, { recursive: true });
  writeFileSync(
    join(outDir, 'README.md'),
    '# Generated code: DO NOT EDIT\n\nEverything in this folder is written by `npm run generate -w @plugboard/proto`\n(buf + ts-proto from `packages/proto/proto/`). Edit the `.proto` files and regenerate.\n',
  );
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
