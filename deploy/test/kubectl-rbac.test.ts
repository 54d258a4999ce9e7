// The Role for `kubectl plugboard` users: exactly what the plugin's pod-proxy path needs (list the
// gateway pods, GET/POST/DELETE through pods/proxy), in the release namespace only, and optional.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { asArray, at, find, only, render } from './helm.js';

describe('kubectl plugin RBAC', () => {
  it('grants list pods and pods/proxy get/create/delete in the release namespace', () => {
    const role = only(render({ namespace: 'gpu-ops' }), 'Role', '-kubectl');
    assert.equal(role.metadata.name, 'pb-plugboard-kubectl');
    assert.equal(role.metadata.namespace, 'gpu-ops');
    const rules = asArray(at(role, 'rules')).map((r) => ({
      resources: at(r, 'resources'),
      verbs: at(r, 'verbs'),
    }));
    assert.deepEqual(rules, [
      { resources: ['pods'], verbs: ['get', 'list'] },
      { resources: ['pods/proxy'], verbs: ['get', 'create', 'delete'] },
    ]);
  });

  it('is left out with kubectlPlugin.createRole=false', () => {
    const objects = render({ values: { kubectlPlugin: { createRole: false } } });
    assert.deepEqual(find(objects, 'Role', '-kubectl'), []);
  });
});
