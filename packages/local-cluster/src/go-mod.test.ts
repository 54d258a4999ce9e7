import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { generateGoMod, parseUpstreamGoMod } from './go-mod.js';
import { downloadedGoMod } from './go-toolchain.js';
import { GO_MODULE_DIR, GO_MODULE_PATH, KUBERNETES_VERSION, stagingVersion } from './versions.js';

const UPSTREAM = `// This is a generated file. Do not edit directly.
module k8s.io/kubernetes

go 1.26.0

godebug default=go1.26

require (
	go.etcd.io/etcd/client/v3 v3.7.0
	k8s.io/api v0.0.0
)

require go.etcd.io/etcd/server/v3 v3.7.0 // indirect

replace (
	k8s.io/api => ./staging/src/k8s.io/api
	k8s.io/streaming => ./staging/src/k8s.io/streaming
	example.com/fork => example.com/fork v1.2.3
)

replace k8s.io/cri-streaming => ./staging/src/k8s.io/cri-streaming
`;

function replaceLines(goMod: string): string[] {
  return goMod
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.includes('=>'))
    .map((l) => l.replace(/^replace\s+/, ''))
    .sort();
}

describe('go.mod from upstream', () => {
  it('reads the go and godebug lines, the staging replaces and the requirements', () => {
    const up = parseUpstreamGoMod(UPSTREAM);
    assert.equal(up.go, '1.26.0');
    assert.equal(up.godebug, 'default=go1.26');
    assert.deepEqual(up.staging, ['k8s.io/api', 'k8s.io/cri-streaming', 'k8s.io/streaming']);
    assert.equal(up.requires.get('go.etcd.io/etcd/server/v3'), 'v3.7.0');
  });

  it('replaces every staging module with its published tag and pins etcd at upstream’s version', () => {
    const text = generateGoMod({
      modulePath: 'example.com/x',
      kubernetesVersion: 'v1.37.2',
      upstream: parseUpstreamGoMod(UPSTREAM),
    });
    assert.deepEqual(replaceLines(text), [
      'k8s.io/api => k8s.io/api v0.37.2',
      'k8s.io/cri-streaming => k8s.io/cri-streaming v0.37.2',
      'k8s.io/streaming => k8s.io/streaming v0.37.2',
    ]);
    assert.match(text, /\tgo\.etcd\.io\/etcd\/server\/v3 v3\.7\.0\n/);
    assert.match(text, /\tk8s\.io\/kubernetes v1\.37\.2\n/);
    assert.match(text, /^go 1\.26\.0$/m);
    assert.match(text, /DO NOT EDIT/);
  });

  it('refuses a go.mod without staging replaces or without etcd', () => {
    assert.throws(() => parseUpstreamGoMod('module x\n\ngo 1.26\n'), /replaces no staging module/);
    const noEtcd = parseUpstreamGoMod(UPSTREAM.replace(/require go\.etcd\.io\/etcd\/server.*\n/, ''));
    assert.throws(
      () => generateGoMod({ modulePath: 'x', kubernetesVersion: 'v1.37.2', upstream: noEtcd }),
      /does not require go\.etcd\.io\/etcd\/server\/v3/,
    );
  });

  it('derives the staging tag from the release', () => {
    assert.equal(stagingVersion('v1.37.2'), 'v0.37.2');
    assert.throws(() => stagingVersion('v1.37.2-rc.0'), /not a Kubernetes release/);
  });

  it('the committed go/go.mod is what the script derives from the upstream release (no hand edits)', async () => {
    const upstream = parseUpstreamGoMod(await downloadedGoMod('k8s.io/kubernetes', KUBERNETES_VERSION));
    const committed = readFileSync(join(GO_MODULE_DIR, 'go.mod'), 'utf8');
    const generated = generateGoMod({
      modulePath: GO_MODULE_PATH,
      kubernetesVersion: KUBERNETES_VERSION,
      upstream,
    });
    assert.deepEqual(replaceLines(committed), replaceLines(generated));
    assert.equal(replaceLines(committed).length, upstream.staging.length);
    for (const line of generated
      .split('\n')
      .filter((l) => /^\t(go\.etcd\.io\/etcd\/server\/v3|k8s\.io\/kubernetes) /.test(l))) {
      assert.ok(committed.includes(`${line}\n`), `go.mod keeps "${line.trim()}"`);
    }
  });
});
