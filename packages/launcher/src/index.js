// The one launcher behind every bin/*.js shim: a package's CLI from dist/ when it has been built,
// else its TypeScript source under tsx. Plain JavaScript, so a shim runs without a build.
import { existsSync } from 'node:fs';
import { register } from 'node:module';

// Sibling workspaces resolve to their src/ too (their `@plugboard/source` export condition), as
// under `node --conditions=@plugboard/source`.
const sourceConditionHook = `export async function resolve(specifier, context, next) {
  return next(specifier, { ...context, conditions: [...new Set([...(context.conditions ?? []), '@plugboard/source'])] });
}`;

/**
 * Imports the CLI of the package whose bin is at `binUrl` (the shim's `import.meta.url`):
 * `../dist/cli.js` when present, else `../src/cli.ts`. Returns the module; importing it may already
 * run the CLI (the gateway's and kubelet-sim's do), otherwise the shim calls what it exports.
 * @param {string | URL} binUrl
 * @returns {Promise<Record<string, unknown>>}
 */
export async function loadCli(binUrl) {
  const dist = new URL('../dist/cli.js', binUrl);
  if (existsSync(dist)) return import(dist.href);
  register(`data:text/javascript,${encodeURIComponent(sourceConditionHook)}`);
  const { register: registerTsx } = await import('tsx/esm/api');
  registerTsx();
  return import(new URL('../src/cli.ts', binUrl).href);
}
