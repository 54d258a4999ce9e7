// Fault drills on a DRA device of a driver the gateway does not run, against kubelet-sim over real
// Unix sockets and the real API slice: the other driver is Plugboard's own DRA driver library started
// in this process (the gateway's config does not list it), the gateway sees its devices through the
// ResourceSlice informer. A fault is then a DeviceTaintRule selecting exactly that device: taint None
// is a dry run whose status (written by kubelet-sim's device taint eviction controller, upstream's
// words) says the pod would be evicted while it keeps running; a second fault with NoExecute turns
// the same rule to NoExecute and the pod is evicted; a restarted gateway keeps the fault and adopts
// the rule; clearing deletes it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { KubeConfig, ResourceV1Api } from '@kubernetes/client-node';
import { DraDriver, SimulatedSource, kubeApiFromKubeConfig } from '@plugboard/plugin';
import { gatewayDocument, simNode, type SimNode } from '@plugboard/testbed';
import type { FaultState, NodeSnapshot } from '@plugboard/api';
import type { DeviceTaintRule } from '@plugboard/k8s-api';
import { parseGatewayConfig, startGateway, type Gateway, type GatewayConfig } from '../src/index.js';
import { faultTaintRule } from '../src/faults/taint-rules.js';
import { waitFor } from './helpers.js';

const OTHER = 'other.plugboard.example';
const GPU = 'plugboard.example/gpu';
const NODE = 'taint-rule-node';
const TOKEN = 'test-token-0123456789abcdef';
const silent = pino({ level: 'silent' });

let dir: string;
let node: SimNode;
let driver: DraDriver;
let config: GatewayConfig;
let gw: Gateway;
let resource: ResourceV1Api;

const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
const snapshot = async (): Promise<NodeSnapshot> =>
  (await (await fetch(`${gw.url}/api/v1/node`)).json()) as NodeSnapshot;
const until = (what: string, pred: (s: NodeSnapshot) => unknown, timeoutMs?: number): Promise<NodeSnapshot> =>
  waitFor(
    what,
    async () => {
      const s = await snapshot();
      return pred(s) ? s : null;
    },
    timeoutMs,
  );
async function post(path: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${gw.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}
/** The DeviceTaintRules as the API server holds them (client-node 1.4 has no typed v1 client for the kind). */
const rules = async (): Promise<DeviceTaintRule[]> => {
  const res = await fetch(`${node.sim.url}/apis/resource.k8s.io/v1/devicetaintrules`);
  assert.equal(res.status, 200);
  return ((await res.json()) as { items: DeviceTaintRule[] }).items;
};

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pb-gw-taint-rule-'));
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, `${TOKEN}\n`);
  node = await simNode(dir, NODE, {
    sim: { listen: '127.0.0.1:0', podResourcesRateLimit: false, syncFrequencyMs: 200 },
  });
  const kc = new KubeConfig();
  kc.loadFromFile(node.kubeconfig);
  resource = kc.makeApiClient(ResourceV1Api);
  await resource.createDeviceClass({
    body: {
      metadata: { name: OTHER },
      spec: { selectors: [{ cel: { expression: `device.driver == "${OTHER}"` } }] },
    },
  });
  // The other driver: not in the gateway's config, started here against the same node.
  driver = new DraDriver({
    driverName: OTHER,
    nodeName: NODE,
    source: new SimulatedSource({ count: 2, idPrefix: 'acc' }),
    kube: await kubeApiFromKubeConfig({ kubeconfig: node.kubeconfig }),
    pluginsDir: node.pluginsDir,
    pluginsRegistryDir: node.pluginsRegistryDir,
    cdiDir: node.cdiDir,
  });
  await driver.start();
  config = parseGatewayConfig(
    gatewayDocument(node, {
      resources: [{ name: GPU, simulated: { count: 1 } }],
      stateDir: join(dir, 'gateway-state'),
      tokenFile,
      gateway: { podResources: { pollIntervalMs: 200, maxBackoffMs: 400 } },
    }),
  );
  gw = await startGateway(config, { logger: silent });
});

after(async () => {
  await gw?.stop();
  await driver?.stop();
  await node?.remove();
  rmSync(dir, { recursive: true, force: true });
});

let device: string;
let faultId: string;

test('the other driver is seen through its ResourceSlices; a pod holds a claim on one of its devices', async () => {
  await node.sim.admitPod({
    metadata: { name: 'holder', namespace: 'default' },
    spec: {
      resourceClaims: [{ name: 'acc', resourceClaimTemplateName: 'acc' }],
      containers: [{ name: 'main', resources: { claims: [{ name: 'acc' }] } }],
    },
  });
  await resource.createNamespacedResourceClaimTemplate({
    namespace: 'default',
    body: {
      metadata: { name: 'acc', namespace: 'default' },
      spec: { spec: { devices: { requests: [{ name: 'acc', exactly: { deviceClassName: OTHER } }] } } },
    },
  });
  const s = await until('the pod running with its claim prepared on the other driver', (s) => {
    const ref = s.pods['default/holder']?.claims?.[0]?.claim;
    return s.pods['default/holder']?.phase === 'Running' && ref && s.dra?.claims[ref]?.phase === 'prepared';
  });
  assert.equal(s.dra!.drivers[OTHER]!.inProcess, false);
  const claim = s.dra!.claims[s.pods['default/holder']!.claims![0]!.claim!]!;
  device = claim.devices[0]!.device;
  assert.equal(s.dra!.devices[`${OTHER}/${NODE}/${device}`]!.sourceId, null);
});

test('taint None: ONE DeviceTaintRule, its status says "1 pod would be evicted", the pod keeps running', async () => {
  const r = await post('/api/v1/faults', {
    resource: OTHER,
    deviceId: device,
    reason: 'drill: would this evict anything?',
    taint: 'None',
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  faultId = r.body.id as string;
  const expected = faultTaintRule(OTHER, NODE, device);
  const listed = await rules();
  assert.equal(listed.length, 1);
  const rule = listed[0]!;
  assert.equal(rule.metadata.name, expected.name);
  assert.deepEqual(rule.spec.deviceSelector, { driver: OTHER, pool: NODE, device });
  assert.equal(rule.spec.taint.effect, 'None');
  assert.equal(rule.metadata.labels?.['app.kubernetes.io/managed-by'], 'plugboard');
  assert.equal(rule.metadata.labels?.['plugboard.dev/fault'], 'simulated');
  assert.equal(
    rule.metadata.annotations?.['plugboard.dev/fault-reason'],
    'drill: would this evict anything?',
  );

  const s = await until(
    "the fault active with the controller's dry-run condition",
    (s) => s.faults[faultId]?.taintRuleStatus?.condition?.reason === 'NoEffect',
  );
  const fault: FaultState = s.faults[faultId]!;
  assert.equal(fault.state, 'active');
  assert.deepEqual(fault.taintRule, expected);
  assert.equal(fault.taint, 'None');
  assert.deepEqual(
    { ...fault.taintRuleStatus, condition: { ...fault.taintRuleStatus!.condition, lastTransitionTime: '' } },
    {
      observed: true,
      effect: 'None',
      condition: {
        status: 'False',
        reason: 'NoEffect',
        message:
          '1 published device selected. 1 allocated device selected. 1 pod would be evicted in 1 namespace if the effect was NoExecute. This information will not be updated again. Recreate the DeviceTaintRule to trigger an update.',
        lastTransitionTime: '',
        current: true,
      },
      podsUsingDevice: ['default/holder'],
    },
  );
  assert.equal(s.pods['default/holder']?.phase, 'Running');
});

test('a restarted gateway keeps the fault and adopts its rule rather than making a second one', async () => {
  await gw.stop();
  gw = await startGateway(config, { logger: silent });
  const s = await until('the fault restored and active', (s) => s.faults[faultId]?.state === 'active');
  assert.equal(s.faults[faultId]!.taintRuleStatus?.condition?.reason, 'NoEffect');
  assert.equal((await rules()).length, 1);
});

test('taint NoExecute on the same device: the same rule turns NoExecute and the pod is evicted', async () => {
  const r = await post('/api/v1/faults', {
    resource: OTHER,
    deviceId: device,
    reason: 'drill: evict',
    taint: 'NoExecute',
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const s = await until(
    'the pod evicted and the rule NoExecute',
    (s) =>
      (s.pods['default/holder'] === undefined || s.pods['default/holder'].phase === 'Failed') &&
      s.faults[r.body.id as string]?.taintRuleStatus?.effect === 'NoExecute',
  );
  const listed = await rules();
  assert.equal(listed.length, 1);
  assert.equal(listed[0]!.spec.taint.effect, 'NoExecute');
  const condition = s.faults[r.body.id as string]!.taintRuleStatus!.condition;
  assert.ok(
    condition?.reason === 'PodsPendingEviction' || condition?.reason === 'Completed',
    JSON.stringify(condition),
  );
});

test("clearing the device's faults deletes the rule", async () => {
  const res = await fetch(
    `${gw.url}/api/v1/faults?resource=${encodeURIComponent(OTHER)}&deviceId=${encodeURIComponent(device)}`,
    { method: 'DELETE', headers },
  );
  assert.equal(res.status, 200);
  assert.equal(((await res.json()) as { items: unknown[] }).items.length, 2);
  await waitFor('the rule deleted', async () => ((await rules()).length === 0 ? true : null));
  await until('no fault left', (s) => Object.keys(s.faults).length === 0);
});

test('a fault whose TTL runs out deletes its rule', async () => {
  const r = await post('/api/v1/faults', {
    resource: OTHER,
    deviceId: device,
    reason: 'drill: one second',
    taint: 'NoSchedule',
    ttlSeconds: 1,
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.deepEqual(
    (await rules()).map((x) => x.spec.taint.effect),
    ['NoSchedule'],
  );
  await waitFor('the rule deleted at expiry', async () => ((await rules()).length === 0 ? true : null));
  await until('no fault left', (s) => Object.keys(s.faults).length === 0);
});

test('an unknown device of the other driver: 422 problem+json, no rule', async () => {
  const r = await post('/api/v1/faults', { resource: OTHER, deviceId: 'nope', reason: 'x', taint: 'None' });
  assert.equal(r.status, 422);
  assert.match(String(r.body.detail), /unknown device "nope" of DRA driver "other\.plugboard\.example"/);
  assert.equal((await rules()).length, 0);
});
