#!/usr/bin/env node
// plugboard-kubelet-sim: runs the built CLI (dist/) when present, otherwise the TypeScript
// source through tsx with the workspace's `@plugboard/source` export condition.
import { existsSync } from 'node:fs';
import { register } from 'node:module';

const built = new URL('../dist/cli.js', import.meta.url);
if (existsSync(built)) {
  await import(built.href);
} else {
  const { register: registerTsx } = await import('tsx/esm/api');
  registerTsx();
  const hook =
    'export async function resolve(specifier, context, next) {' +
    " return next(specifier, { ...context, conditions: [...context.conditions, '@plugboard/source'] }); }";
  register(`data:text/javascript,${encodeURIComponent(hook)}`);
  await import(new URL('../src/cli.ts', import.meta.url).href);
}
