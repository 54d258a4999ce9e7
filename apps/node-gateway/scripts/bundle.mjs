#!/usr/bin/env node
// Bundles the gateway CLI into dist/bundle/ — what the container image runs (no node_modules).
// One tree-shaken, minified ESM entry plus chunks; @kubernetes/client-node sits in its own chunk,
// loaded only when the Kubernetes API is enabled. Why: the gateway's memory target (≤ 120 MB RSS at
// 1,024 devices / 250 pods) — loaded from node_modules, client-node alone keeps ~14 MB of module
// source text (UTF-16, as some files hold non-Latin-1 characters) and ~77 MB of RSS; bundled with
// `charset: ascii` and minified it is a 1.5 MB Latin-1 chunk. Functions and classes keep their names
// (keepNames), so stack traces and logs stay readable; a linked source map sits beside.
//
//   node scripts/bundle.mjs [--outdir DIR]
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const outIndex = process.argv.indexOf('--outdir');
const outdir = outIndex > 0 ? process.argv[outIndex + 1] : `${root}dist/bundle`;

rmSync(outdir, { recursive: true, force: true });
const result = await build({
  absWorkingDir: root,
  entryPoints: { 'plugboard-gateway': 'src/cli.ts' },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  outExtension: { '.js': '.mjs' },
  chunkNames: 'chunks/[name]-[hash]',
  // The workspaces' TypeScript sources (as in tests), so the bundle needs no other build first.
  conditions: ['@plugboard/source'],
  charset: 'ascii',
  minify: true,
  keepNames: true,
  legalComments: 'external',
  sourcemap: 'linked',
  // CommonJS dependencies call require() for Node built-ins; ESM output has no require of its own.
  banner: {
    js: "import { createRequire as __pbRequire } from 'node:module'; const require = __pbRequire(import.meta.url);",
  },
  metafile: true,
  logLevel: 'warning',
});
const outputs = Object.entries(result.metafile.outputs).filter(([file]) => file.endsWith('.mjs'));
for (const [file, { bytes }] of outputs) {
  console.log(`${file.replace(/^.*?dist\//, 'dist/')}  ${(bytes / 1024).toFixed(0)} KB`);
}
