import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gatewayDocument, mergeSection } from './gateway-document.js';
import type { TestNode } from './test-node.js';

const node: TestNode = {
  kind: 'sim',
  name: 'n1',
  dir: '/t/n1',
  devicePluginDir: '/t/n1/device-plugins',
  pluginsDir: '/t/n1/plugins',
  pluginsRegistryDir: '/t/n1/plugins_registry',
  cdiDir: '/t/n1/cdi',
  podResourcesSocket: '/t/n1/kubelet/pod-resources/kubelet.sock',
  kubeconfig: '/t/n1/kubelet/kubeconfig',
  sysfsRoot: '/t/n1/kubelet/sysfs',
  remove: () => Promise.resolve(),
};

describe('gatewayDocument', () => {
  it("points the gateway's section at the node's sockets, directories and kubeconfig", () => {
    assert.deepEqual(gatewayDocument(node, { resources: [{ name: 'x/gpu', simulated: { count: 1 } }] }), {
      resources: [{ name: 'x/gpu', simulated: { count: 1 } }],
      gateway: {
        nodeName: 'n1',
        listen: '127.0.0.1:0',
        devicePluginDir: '/t/n1/device-plugins',
        pluginsDir: '/t/n1/plugins',
        pluginsRegistryDir: '/t/n1/plugins_registry',
        cdiDir: '/t/n1/cdi',
        stateDir: null,
        podResources: { socket: '/t/n1/kubelet/pod-resources/kubelet.sock' },
        kube: { mode: 'kubeconfig', kubeconfig: '/t/n1/kubelet/kubeconfig' },
        topology: { sysfsRoot: '/t/n1/kubelet/sysfs' },
        faults: { enabled: true },
      },
    });
  });

  for (const [what, options, expected] of [
    ['dra drivers', { dra: [{ driver: 'd.example' }] }, { dra: [{ driver: 'd.example' }] }],
    ['no dra key when there are none', { dra: [] }, {}],
    ['faults off', { faults: false }, { gateway: { faults: { enabled: false } } }],
    ['a state dir', { stateDir: '/s' }, { gateway: { stateDir: '/s' } }],
    ['a token file', { tokenFile: '/tok' }, { gateway: { auth: { tokenFile: '/tok' } } }],
    ['another kubeconfig', { kubeconfig: '/admin' }, { gateway: { kube: { kubeconfig: '/admin' } } }],
    [
      'overrides merged deeply',
      { gateway: { podResources: { pollIntervalMs: 200 }, kube: { emitEvents: false }, logLevel: 'warn' } },
      {
        gateway: {
          podResources: { socket: node.podResourcesSocket, pollIntervalMs: 200 },
          kube: { emitEvents: false },
          logLevel: 'warn',
        },
      },
    ],
  ] as const) {
    it(what, () => {
      const doc = gatewayDocument(node, options);
      const base = gatewayDocument(node);
      assert.deepEqual(doc, {
        ...base,
        ...('dra' in expected ? { dra: expected.dra } : {}),
        gateway: mergeSection(base.gateway, 'gateway' in expected ? expected.gateway : {}),
      });
      if (!('dra' in expected)) assert.equal('dra' in doc, false);
    });
  }
});

describe('mergeSection', () => {
  it('merges objects key by key and replaces arrays and scalars', () => {
    assert.deepEqual(
      mergeSection({ a: { b: 1, c: [1, 2] }, d: 1, e: { f: 1 } }, { a: { c: [3] }, d: { x: 1 }, e: null }),
      { a: { b: 1, c: [3] }, d: { x: 1 }, e: null },
    );
  });
});
