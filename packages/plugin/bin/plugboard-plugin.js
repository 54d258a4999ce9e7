#!/usr/bin/env node
// plugboard-plugin: runs the built CLI (dist/) when present, else the TypeScript source under tsx.
import { existsSync } from 'node:fs';
import { register } from 'node:module';

const dist = new URL('../dist/cli.js', import.meta.url);
if (existsSync(dist)) {
  const { run } = await import(dist.href);
  await run();
} else {
  // Resolve sibling workspaces to their sources (the `@plugboard/source` export condition).
  const hook = `export async function resolve(specifier, context, next) {
    return next(specifier, { ...context, conditions: [...new Set([...context.conditions, '@plugboard/source'])] });
  }`;
  register(`data:text/javascript,${encodeURIComponent(hook)}`);
  const { register: registerTsx } = await import('tsx/esm/api');
  registerTsx();
  const { run } = await import(new URL('../src/cli.ts', import.meta.url).href);
  await run();
}
