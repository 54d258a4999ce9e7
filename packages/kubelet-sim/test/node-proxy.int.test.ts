// The API server's node proxy to the simulated kubelet: `GET /api/v1/nodes/{node}/proxy/configz`
// answers the kubelet's configz document (what a node agent reads the Topology, CPU and Memory
// Manager policies from on a real cluster), through @kubernetes/client-node as through raw HTTP;
// other kubelet paths are the kubelet's 404, another node the API server's. With `controlApi: false`
// the simulator offers only what a real cluster does: /control/v1/ is a 404.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { startFixture, type SimFixture } from './helpers.js';

describe('nodes/{name}/proxy/configz', () => {
  let f: SimFixture;
  before(async () => {
    f = await startFixture({
      nodeName: 'proxy-node',
      numaNodes: 2,
      cpus: 8,
      topologyManagerPolicy: 'single-numa-node',
      topologyManagerScope: 'pod',
      reservedCpus: [0, 1, 4],
      controlApi: false,
    });
  });
  after(() => f.cleanup());

  test("the kubelet's configz with the managers' policies, through client-node's node proxy", async () => {
    const kc = new KubeConfig();
    kc.loadFromFile(f.sim.kubeconfigPath);
    const core = kc.makeApiClient(CoreV1Api);
    // Typed as a string, but client-node hands over a JSON body already parsed.
    const body: unknown = await core.connectGetNodeProxyWithPath({ name: 'proxy-node', path: 'configz' });
    const doc = (typeof body === 'string' ? JSON.parse(body) : body) as {
      kubeletconfig: Record<string, unknown>;
    };
    assert.deepEqual(Object.keys(doc), ['kubeletconfig']);
    assert.equal(doc.kubeletconfig['topologyManagerPolicy'], 'single-numa-node');
    assert.equal(doc.kubeletconfig['topologyManagerScope'], 'pod');
    assert.equal(doc.kubeletconfig['cpuManagerPolicy'], 'static');
    assert.equal(doc.kubeletconfig['memoryManagerPolicy'], 'Static');
    assert.equal(doc.kubeletconfig['reservedSystemCPUs'], '0-1,4');
    assert.equal(doc.kubeletconfig['kind'], undefined, 'configz serialises the struct without TypeMeta');
  });

  test('other kubelet paths, other nodes and other verbs', async () => {
    const other = await fetch(`${f.sim.url}/api/v1/nodes/proxy-node/proxy/pods`);
    assert.equal(other.status, 404);
    assert.equal(await other.text(), '404 page not found\n');
    const missing = await fetch(`${f.sim.url}/api/v1/nodes/elsewhere/proxy/configz`);
    assert.equal(missing.status, 404);
    assert.match(((await missing.json()) as { message: string }).message, /nodes "elsewhere" not found/);
    const post = await fetch(`${f.sim.url}/api/v1/nodes/proxy-node/proxy/configz`, { method: 'POST' });
    assert.equal(post.status, 405);
    const discovery = (await (await fetch(`${f.sim.url}/api/v1`)).json()) as {
      resources: { name: string; verbs: string[] }[];
    };
    assert.deepEqual(
      discovery.resources.find((r) => r.name === 'nodes/proxy'),
      { name: 'nodes/proxy', singularName: '', namespaced: false, kind: 'NodeProxyOptions', verbs: ['get'] },
    );
  });

  test('without the control API, /control/v1/ is not there', async () => {
    const res = await fetch(`${f.sim.url}/control/v1/state?view=admissions`);
    assert.equal(res.status, 404);
    assert.equal(((await res.json()) as { kind: string }).kind, 'Status');
  });
});
