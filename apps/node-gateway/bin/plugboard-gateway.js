#!/usr/bin/env node
// Runs the built gateway (dist/) when present, else the TypeScript source through tsx with the
// `@plugboard/source` condition so sibling workspaces resolve to their src/ too.
import { existsSync } from 'node:fs';
import { register } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const dist = new URL('../dist/cli.js', import.meta.url);
if (existsSync(fileURLToPath(dist))) {
  await import(dist.href);
} else {
  const { register: registerTsx } = await import('tsx/esm/api');
  registerTsx();
  const hook =
    'export async function resolve(specifier, context, next) {' +
    " const conditions = [...new Set([...(context.conditions ?? []), '@plugboard/source'])];" +
    ' return next(specifier, { ...context, conditions }); }';
  register(`data:text/javascript,${encodeURIComponent(hook)}`, pathToFileURL('./'));
  await import(new URL('../src/cli.ts', import.meta.url).href);
}
