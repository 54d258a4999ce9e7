import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { buildKey, cacheRoot, versionLdflags } from './binaries.js';

describe('binaries', () => {
  it('stamps the release into client-go and component-base, as hack/lib/version.sh does', () => {
    const flags = versionLdflags('v1.37.2');
    for (const pkg of ['k8s.io/client-go/pkg/version', 'k8s.io/component-base/version']) {
      assert.ok(flags.includes(`-X ${pkg}.gitVersion=v1.37.2`));
      assert.ok(flags.includes(`-X ${pkg}.gitMajor=1`));
      assert.ok(flags.includes(`-X ${pkg}.gitMinor=37`));
    }
  });

  it('keys the cache on the module’s files: same files, same key; any change, a new key', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pb-key-'));
    mkdirSync(join(dir, 'cmd', 'x'), { recursive: true });
    writeFileSync(join(dir, 'go.mod'), 'module x\n');
    writeFileSync(join(dir, 'go.sum'), 'a h1:x\n');
    writeFileSync(join(dir, 'cmd', 'x', 'main.go'), 'package main\n');
    const first = buildKey(dir);
    assert.equal(buildKey(dir), first);
    writeFileSync(join(dir, 'go.sum'), 'a h1:y\n');
    const second = buildKey(dir);
    assert.notEqual(second, first);
    writeFileSync(join(dir, 'cmd', 'x', 'main.go'), 'package main // changed\n');
    const third = buildKey(dir);
    assert.notEqual(third, second);
    writeFileSync(join(dir, 'README.md'), 'not part of the build\n');
    assert.equal(buildKey(dir), third);
  });

  it('keeps binaries outside the repository: $PLUGBOARD_CACHE_DIR, else the XDG cache', () => {
    assert.equal(cacheRoot({ PLUGBOARD_CACHE_DIR: '/c' }), '/c');
    assert.equal(cacheRoot({ XDG_CACHE_HOME: '/x' }), '/x/plugboard');
  });
});
