#!/usr/bin/env node
// Prunes the web image's production node_modules to the files the server can load — what Next's
// `output: 'standalone'` does, which the custom server rules out (see web.Dockerfile). Run in the
// Dockerfile's prod-deps stage, after `npm ci --omit=dev`, with the build's .next/ and dist/ in place:
//
//   node deploy/docker/web-runtime-deps.mjs apps/web
//
// Kept: every file listed by Next's own traces (.next/next-server.js.nft.json and each route's
// .nft.json: the production server and what the pages load), plus what @vercel/nft (the tracer Next
// ships in next/dist/compiled) finds from the custom server (dist/server.js: pino, ws, zod,
// @kubernetes/client-node, `next` itself) and the compiled next.config.mjs. Next's dev server,
// bundlers and compilers are traced by neither and go: the server runs `next({ dev: false })` only.
// Everything else in node_modules is deleted. Prints the sizes before and after.
import { createRequire } from 'node:module';
import { existsSync, lstatSync, readdirSync, readFileSync, rmSync, rmdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = process.cwd();
const web = resolve(root, process.argv[2] ?? 'apps/web');
const require = createRequire(join(web, 'package.json'));
const { nodeFileTrace } = require('next/dist/compiled/@vercel/nft');

/** Paths, relative to the repository root, that the server may read. */
const keep = new Set();

function nftFiles(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...nftFiles(path));
    else if (entry.name.endsWith('.nft.json')) out.push(path);
  }
  return out;
}

for (const trace of nftFiles(join(web, '.next'))) {
  const { files } = JSON.parse(readFileSync(trace, 'utf8'));
  for (const file of files) keep.add(relative(root, resolve(dirname(trace), file)));
}

// What Next leaves out of its own server trace (build/collect-build-traces: development builds of
// React and of Next's runtimes, webpack's bundles, type declarations, source maps), plus its dev
// server and the native SWC compiler, which `next({ dev: false })` never loads.
const ignored = [
  /\/next\/dist\/compiled\/next-server\/.*\.dev\.js$/,
  /\/next\/dist\/compiled\/webpack\/(bundle4|bundle5)\.js$/,
  /\/next\/dist\/server\/lib\/route-resolver/,
  /\/next\/dist\/pages\//,
  /\/next\/dist\/server\/dev\//,
  /\/next\/dist\/esm\//,
  /\/react(-dom)?\/.*\.development\.js$/,
  /\/@next\/swc-/,
  /\.d\.ts$/,
  /\.map$/,
];
/**
 * Traced but not shipped: sharp and its libvips build (19 MB) serve only next/image optimisation,
 * which the dashboard does not use (a request to /_next/image would fail).
 */
const dropped = [/^node_modules\/sharp\//, /^node_modules\/@img\//];
const entries = [join(web, 'dist/server.js'), join(web, 'dist/next.config.mjs')].filter(existsSync);
const { fileList } = await nodeFileTrace(entries, {
  base: root,
  processCwd: web,
  ignore: (path) => ignored.some((re) => re.test(`/${path}`)),
});
for (const file of fileList) keep.add(file);
// Loading next.config installs require-hook aliases (webpack, @babel/runtime) and resolves their
// targets at once: string literals in next/dist/server/config-utils.js, invisible to a tracer. The
// targets stay (small shims); webpack's bundle behind them is never loaded by the production server.
const configUtils = require.resolve('next/dist/server/config-utils');
for (const [, request] of readFileSync(configUtils, 'utf8').matchAll(/'(next\/dist\/[^']+)'/g)) {
  keep.add(relative(root, require.resolve(request)));
}

let before = 0;
let after = 0;
/** Deletes what is not kept under dir; returns whether anything is left. */
function prune(dir) {
  let left = false;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const rel = relative(root, path);
    if (entry.isDirectory()) {
      if (prune(path)) left = true;
      else rmdirSync(path);
      continue;
    }
    const size = lstatSync(path).size;
    before += size;
    if (keep.has(rel) && !dropped.some((re) => re.test(rel))) {
      after += size;
      left = true;
    } else {
      rmSync(path);
    }
  }
  return left;
}
for (const dir of [join(root, 'node_modules'), join(web, 'node_modules')]) if (existsSync(dir)) prune(dir);
const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;
console.log(`[web-runtime-deps] node_modules: ${mb(before)} → ${mb(after)} (${keep.size} traced files)`);
