// Kubernetes discovery of gateway pods by label selector, against kubelet-sim's API slice (list +
// watch through @kubernetes/client-node's informer).
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { KubeletSim } from '@plugboard/kubelet-sim';
import { simNode, type SimNode, waitFor } from '@plugboard/testbed';
import { kubernetesDirectory, type GatewayDirectory } from './gateway-directory';

let dir: string;
let node: SimNode;
let sim: KubeletSim;
let directory: GatewayDirectory | undefined;
const savedKubeconfig = process.env.KUBECONFIG;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pb-web-disc-'));
  node = await simNode(dir, 'disc-node', { sim: { listen: '127.0.0.1:0' } });
  sim = node.sim;
  // The informer loads its client config the standard way (KUBECONFIG, else in-cluster).
  process.env.KUBECONFIG = node.kubeconfig;
});

after(async () => {
  await directory?.stop();
  await node?.remove();
  if (savedKubeconfig === undefined) delete process.env.KUBECONFIG;
  else process.env.KUBECONFIG = savedKubeconfig;
  rmSync(dir, { recursive: true, force: true });
});

it('lists running gateway pods matching the selector by node name and follows deletions', async () => {
  const labels = { 'app.kubernetes.io/name': 'plugboard', 'app.kubernetes.io/component': 'gateway' };
  await sim.admitPod({
    metadata: { name: 'gw-1', namespace: 'plugboard', labels },
    spec: { containers: [{ name: 'gateway' }] },
  });
  // Same labels in another namespace, and another component in the same namespace: both ignored.
  await sim.admitPod({
    metadata: { name: 'gw-x', namespace: 'other', labels },
    spec: { containers: [{ name: 'gateway' }] },
  });
  await sim.admitPod({
    metadata: {
      name: 'web',
      namespace: 'plugboard',
      labels: { ...labels, 'app.kubernetes.io/component': 'web' },
    },
    spec: { containers: [{ name: 'web' }] },
  });

  let changes = 0;
  directory = await kubernetesDirectory(
    {
      mode: 'kubernetes',
      selector: 'app.kubernetes.io/name=plugboard,app.kubernetes.io/component=gateway',
      namespace: 'plugboard',
      port: 9477,
      scheme: 'http',
    },
    pino({ level: 'silent' }),
  );
  directory.subscribe(() => (changes += 1));
  const list = await waitFor('the gateway pod', () =>
    directory!.list().length > 0 ? directory!.list() : null,
  );
  assert.equal(list.length, 1);
  assert.equal(list[0]!.name, 'disc-node');
  assert.match(list[0]!.url, /^http:\/\/[0-9.]+:9477$/);
  assert.equal(directory.get('disc-node')?.url, list[0]!.url);
  assert.deepEqual(directory.status(), {
    mode: 'kubernetes',
    source:
      'pods matching "app.kubernetes.io/name=plugboard,app.kubernetes.io/component=gateway" in namespace plugboard',
    error: null,
  });

  await sim.deletePod('plugboard', 'gw-1');
  await waitFor('the pod deletion to be seen', () => directory!.list().length === 0);
  assert.ok(changes >= 2, 'subscribers hear about adds and deletes');
});
