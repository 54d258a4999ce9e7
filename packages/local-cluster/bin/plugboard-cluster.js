#!/usr/bin/env node
// plugboard-cluster: runs the built CLI (dist/) when present, else the TypeScript source under tsx.
// A real Kubernetes on this machine (see src/cli.ts).
import { existsSync } from 'node:fs';
import { register } from 'node:module';

const dist = new URL('../dist/cli.js', import.meta.url);
let cli;
if (existsSync(dist)) {
  cli = await import(dist.href);
} else {
  // Resolve sibling workspaces to their sources (the `@plugboard/source` export condition).
  const hook = `export async function resolve(specifier, context, next) {
    return next(specifier, { ...context, conditions: [...new Set([...context.conditions, '@plugboard/source'])] });
  }`;
  register(`data:text/javascript,${encodeURIComponent(hook)}`);
  const { register: registerTsx } = await import('tsx/esm/api');
  registerTsx();
  cli = await import(new URL('../src/cli.ts', import.meta.url).href);
}
process.exitCode = await cli.main(process.argv.slice(2));
