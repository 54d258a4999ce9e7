import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, describe, it } from 'node:test';
import { LocalClusterError } from './errors.js';
import {
  builderGoMod,
  ensureThirdPartyBinary,
  THIRD_PARTY_BINARIES,
  thirdPartyDir,
  type ModuleProxySource,
} from './third-party.js';

const run = promisify(execFile);

describe('third-party binaries', () => {
  const caches: string[] = [];
  const freshCache = (): NodeJS.ProcessEnv => {
    const dir = mkdtempSync(join(tmpdir(), 'pb-third-party-cache-'));
    caches.push(dir);
    return { ...process.env, PLUGBOARD_CACHE_DIR: dir };
  };
  after(() => {
    for (const dir of caches) rmSync(dir, { recursive: true, force: true });
  });

  it('keys a module-proxy binary on its pinned version, and builds it in a module requiring only that', () => {
    const spec = THIRD_PARTY_BINARIES['dra-example-kubeletplugin'] as ModuleProxySource;
    assert.equal(
      thirdPartyDir('dra-example-kubeletplugin', { PLUGBOARD_CACHE_DIR: '/c' }),
      `/c/third-party/dra-example-kubeletplugin/${spec.version}`,
    );
    assert.match(builderGoMod(spec), new RegExp(`\\nrequire ${spec.module} ${spec.version}\\n$`));
  });

  it('names Go, and how to get it, when Go cannot be run', async () => {
    const env = { ...freshCache(), GO: '/nonexistent/go' };
    await assert.rejects(ensureThirdPartyBinary('generic-device-plugin', { env }), (err: unknown) => {
      assert.ok(err instanceof LocalClusterError);
      assert.equal(err.code, 'go-missing');
      assert.match(err.message, /generic-device-plugin.*needs Go/);
      assert.match(err.message, /go\.dev\/doc\/install/);
      return true;
    });
  });

  it('two callers building at once both get one whole binary (each builds apart, the first rename wins), and no build directory is left', async () => {
    const env = freshCache();
    const [a, b] = await Promise.all([
      ensureThirdPartyBinary('generic-device-plugin', { env }),
      ensureThirdPartyBinary('generic-device-plugin', { env }),
    ]);
    assert.equal(a, b);
    const { stdout } = await run(a, ['--version']);
    assert.notEqual(stdout.trim(), '');
    const parent = join(thirdPartyDir('generic-device-plugin', env), '..');
    assert.deepEqual(readdirSync(parent), [thirdPartyDir('generic-device-plugin', env).split('/').pop()]);
  });
});
