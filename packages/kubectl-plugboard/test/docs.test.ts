// The exit codes and commands a script author reads in docs/OBSERVABILITY.md and `--help` are the
// ones the CLI implements.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { USAGE } from '../src/cli.js';
import { EXIT_CODES } from '../src/errors.js';

const doc = readFileSync(new URL('../../../docs/OBSERVABILITY.md', import.meta.url), 'utf8');
const codes = [...new Set(Object.values(EXIT_CODES))].sort();

describe('documentation', () => {
  it('lists every exit code in docs/OBSERVABILITY.md and --help, and no others', () => {
    const section = doc.slice(doc.indexOf('### Output and exit codes'));
    const documented = [...section.matchAll(/^\| (\d) \| /gm)].map((m) => Number(m[1]));
    assert.deepEqual(documented, codes);
    const help = USAGE.slice(USAGE.indexOf('Exit codes:'));
    assert.deepEqual(
      [...help.matchAll(/^ {2}(\d) {2}/gm)].map((m) => Number(m[1])),
      codes,
    );
  });

  it('documents every command', () => {
    for (const command of [
      'nodes',
      'devices',
      'claims',
      'pods',
      'migration',
      'fault list',
      'fault inject',
      'fault clear',
      'scenario run',
      'scenario list',
      'scenario stop',
      'watch',
    ]) {
      assert.match(doc, new RegExp(`\\| \`${command}[ \`]`), `docs: ${command}`);
      assert.match(USAGE, new RegExp(`kubectl plugboard ${command}`), `--help: ${command}`);
    }
  });

  it('documents the DRA flags in both places', () => {
    for (const flag of ['--api device-plugin', '--taint NoSchedule', '--gateway-namespace', '-A']) {
      const escaped = flag.replace(/[|\\-]/g, (c) => `\\${c}`);
      assert.match(doc, new RegExp(escaped), `docs: ${flag}`);
      assert.match(USAGE, new RegExp(escaped), `--help: ${flag}`);
    }
  });
});
