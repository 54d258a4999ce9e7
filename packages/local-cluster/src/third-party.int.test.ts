import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, describe, it } from 'node:test';
import { LocalClusterError } from './errors.js';
import { checkGo } from './go-toolchain.js';
import { builderGoMod, ensureThirdPartyBinary, THIRD_PARTY_BINARIES, thirdPartyDir } from './third-party.js';

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

  it('keys a binary on its module@version and the Go version only, and builds it in a module requiring only that', () => {
    const spec = THIRD_PARTY_BINARIES['dra-example-kubeletplugin'];
    assert.equal(
      thirdPartyDir('dra-example-kubeletplugin', '1.26.8', { PLUGBOARD_CACHE_DIR: '/c' }),
      `/c/third-party/sigs.k8s.io/dra-example-driver@${spec.version}/go1.26.8`,
    );
    assert.match(builderGoMod(spec), new RegExp(`\\nrequire ${spec.module} ${spec.version}\\n$`));
  });

  it('names Go, and how to get it, when Go cannot be run', async () => {
    const env = { ...freshCache(), GO: '/nonexistent/go' };
    await assert.rejects(ensureThirdPartyBinary('dra-example-kubeletplugin', { env }), (err: unknown) => {
      assert.ok(err instanceof LocalClusterError);
      assert.equal(err.code, 'go-missing');
      assert.match(err.message, /dra-example-kubeletplugin.*needs Go/);
      assert.match(err.message, /go\.dev\/doc\/install/);
      return true;
    });
  });

  it('two callers building at once both get one whole binary (each builds apart, the first rename wins), and no build directory is left', async () => {
    const env = freshCache();
    const [a, b] = await Promise.all([
      ensureThirdPartyBinary('dra-example-kubeletplugin', { env }),
      ensureThirdPartyBinary('dra-example-kubeletplugin', { env }),
    ]);
    assert.equal(a, b);
    const { stdout } = await run(a, ['--help']);
    assert.match(stdout, /--num-devices/);
    const dir = thirdPartyDir('dra-example-kubeletplugin', await checkGo(), env);
    assert.equal(a, join(dir, 'dra-example-kubeletplugin'));
    assert.deepEqual(readdirSync(join(dir, '..')), [dir.split('/').pop()]);
  });
});
