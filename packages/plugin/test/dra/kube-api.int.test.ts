// The DRA driver's API client against the fake API server over real HTTP: claim reads share one
// kept-alive connection (client-node alone opens one per request), and what a read returns is
// unchanged by it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kubeApiFromKubeConfig, type DraKubeApi } from '../../src/index.js';
import { allocatedClaim, FakeApiServer } from './fake-api-server.js';

describe('kubeApiFromKubeConfig', () => {
  let api: FakeApiServer;
  let kube: DraKubeApi;

  before(async () => {
    api = await FakeApiServer.start();
    api.addNode('node-a');
    kube = await kubeApiFromKubeConfig({ kubeconfig: api.kubeconfigPath });
  });

  after(async () => {
    await api.stop();
  });

  it('reads claims one after another over one connection', async () => {
    const claim = allocatedClaim({
      name: 'gpu-claim',
      node: 'node-a',
      results: [{ driver: 'gpu.example.com', pool: 'node-a', device: 'gpu-0' }],
    });
    api.putClaim(claim);
    const from = api.connections;
    for (let i = 0; i < 5; i++) {
      const read = await kube.readResourceClaim('default', 'gpu-claim');
      assert.equal(read?.metadata.uid, claim.metadata.uid);
      assert.deepEqual(
        read?.status?.allocation?.devices?.results,
        claim.status?.allocation?.devices?.results,
      );
    }
    assert.equal(await kube.readResourceClaim('default', 'missing'), null);
    assert.equal(api.connections - from, 1);
  });
});
