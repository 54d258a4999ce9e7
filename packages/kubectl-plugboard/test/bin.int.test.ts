// The installed entry point: `kubectl-plugboard` as kubectl runs it (a separate process), with exit
// codes a script sees in `$?`.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { EXIT_CODES } from '../src/errors.js';

const bin = fileURLToPath(new URL('../bin/kubectl-plugboard.js', import.meta.url));
const runBin = (args: string[]) =>
  spawnSync(process.execPath, [bin, ...args], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '' },
    // A deadline, not a wait: each run loads the CLI under tsx (~3.5 s of CPU), which takes far
    // longer on a loaded CI machine; a hung CLI still fails here.
    timeout: 120_000,
  });

describe('bin/kubectl-plugboard.js', () => {
  it('prints the version and exits 0', () => {
    const r = runBin(['--version']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, 'kubectl-plugboard 0.1.0\n');
  });

  it('exits 2 on a usage error and 6 when the gateway is unreachable', () => {
    const usage = runBin(['nodes', '--no-such-flag']);
    assert.equal(usage.status, EXIT_CODES.usage);
    assert.match(usage.stderr, /Unknown option '--no-such-flag'/);
    const down = runBin(['nodes', '--gateway', 'http://127.0.0.1:1']);
    assert.equal(down.status, EXIT_CODES.unavailable);
    assert.match(down.stderr, /cannot reach http:\/\/127\.0\.0\.1:1: ECONNREFUSED/);
  });
});
