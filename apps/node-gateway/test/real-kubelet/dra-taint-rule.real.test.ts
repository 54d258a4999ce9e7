// Fault drills through DeviceTaintRule on both kinds of node, one suite body: kubelet-sim (its API
// slice, scheduler and device taint eviction controller) and a real node (v1.37.2 from upstream
// source: kube-scheduler, kube-controller-manager's device taint eviction controller, the kubelet).
// The DRA driver is one the gateway does not run and Plugboard did not write, each in turn: the
// kubelet plugin of kubernetes-sigs/dra-example-driver (built from the Go module proxy) and
// k8s.io/kubernetes's own DRA test driver (test/e2e/dra/test-driver), started by the test bed against
// the node. It is seen through the ResourceSlice informer; a pod holds a claim on one of its devices.
// A fault on that device is a DeviceTaintRule selecting exactly it: taint None is a dry run whose
// status (the controller's words, the same on both kinds) says the pod would be evicted while it
// keeps running; a restarted gateway keeps the fault and adopts the rule; a second fault with
// NoExecute turns the same rule to NoExecute and the pod is evicted; clearing, or a TTL running out,
// deletes the rule; an unknown device is refused with no rule. Last, an extended resource backed by
// DRA (KEP-5004) on that driver: a DeviceClass with extendedResourceName, a pod asking limits for the
// name, the scheduler's special claim on one of the driver's devices, and the gateway's view of it.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { PodExtendedResourceClaimStatus } from '@plugboard/k8s-api';
import { deviceClassFor } from '@plugboard/plugin';
import { pino } from 'pino';
import type { FaultState } from '@plugboard/api';
import {
  gatewayClient,
  gatewayDocument,
  openTestBed,
  pinnedPod,
  testClusterKinds,
  thirdParty,
  waitFor,
  type ClusterNode,
  type GatewayClient,
  type TestBed,
  type TestCluster,
  type TestNamespace,
  type DraExampleDriver,
  type DraTestDriver,
  removeDraObjects,
} from '@plugboard/testbed';
import { parseGatewayConfig, startGateway, type Gateway, type GatewayConfig } from '../../src/index.js';
import { faultTaintRule } from '../../src/faults/taint-rules.js';

/** The drivers a drill targets: neither is run by the gateway, neither is Plugboard's. */
const OTHER_DRIVERS = [
  {
    label: 'dra-example-driver',
    start: (node: ClusterNode, kubeconfig: string) =>
      thirdParty.draExampleDriver(node, { numDevices: 2, kubeconfig }),
  },
  {
    label: "upstream's DRA test driver",
    start: (node: ClusterNode, kubeconfig: string) =>
      thirdParty.draTestDriver(node, { numDevices: 2, kubeconfig }),
  },
] as const;
const GPU = 'plugboard.example/gpu';
const TOKEN = 'test-token-0123456789abcdef';
const silent = pino({ level: 'silent' });
/** The device taint eviction controller's dry-run message (upstream's words, both kinds). */
const DRY_RUN =
  '1 published device selected. 1 allocated device selected. 1 pod would be evicted in 1 namespace if the effect was NoExecute. This information will not be updated again. Recreate the DeviceTaintRule to trigger an update.';

interface PodJson {
  metadata: { uid: string; deletionTimestamp?: string };
  status: { phase: string; resourceClaimStatuses?: { resourceClaimName: string }[] };
}
interface ClaimJson {
  status?: { allocation?: { devices: { results: { pool: string; device: string }[] } } };
}
interface RuleJson {
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: { deviceSelector: Record<string, string>; taint: { effect: string } };
}

for (const kind of testClusterKinds())
  for (const other of OTHER_DRIVERS)
    describe(`fault drills through DeviceTaintRule on the ${kind} kubelet, on ${other.label}'s devices`, () => {
      let bed: TestBed;
      let work: string;
      let cluster: TestCluster;
      let node: ClusterNode;
      let ns: TestNamespace;
      let deviceClass: string;
      let driver: DraExampleDriver | DraTestDriver;
      /** The other driver's name. */
      let driverName: string;
      let config: GatewayConfig;
      let gw: Gateway;
      let client: GatewayClient;
      let pool: string;
      let device: string;
      let podUid: string;
      let faultId: string;

      const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
      const post = async (body: unknown): Promise<{ status: number; body: Record<string, unknown> }> => {
        const res = await fetch(`${gw.url}/api/v1/faults`, {
          method: 'POST',
          headers,
          body: JSON.stringify(body),
        });
        return { status: res.status, body: (await res.json()) as Record<string, unknown> };
      };
      const start = async (): Promise<void> => {
        gw = await startGateway(config, { logger: silent });
        client = gatewayClient(gw.url, { token: TOKEN, name: node.name });
      };
      /** This test's DeviceTaintRules as the API server holds them (the real one is shared by every suite). */
      const ourRules = async (): Promise<RuleJson[]> =>
        (await cluster.kubectlJson<{ items: RuleJson[] }>(['get', 'devicetaintrules'])).items.filter(
          (r) =>
            r.spec.deviceSelector['driver'] === driverName && r.spec.deviceSelector['pool'] === node.name,
        );
      /** The holder as kubectl shows it, null once gone. */
      const holder = async (): Promise<PodJson | null> =>
        (await cluster.kubectlJson<{ items: PodJson[] }>(['get', 'pods', '-n', ns.name])).items.find(
          (p) => p.metadata.uid === podUid,
        ) ?? null;

      before(async () => {
        bed = await openTestBed(kind, 'dtr', { namespace: 'taintrule' });
        ({ work, cluster, node, ns } = bed);
        bed.defer(() => removeDraObjects(cluster, node.name));
        bed.defer(async () => {
          for (const r of await ourRules())
            await cluster.kubectl(['delete', 'devicetaintrule', r.metadata.name, '--ignore-not-found']);
        });
        bed.defer(() => driver?.stop());
        bed.defer(() => gw?.stop());
        const tokenFile = join(work, 'token');
        writeFileSync(tokenFile, `${TOKEN}\n`);
        // The other driver: not in the gateway's config, started here against the same node.
        driver = await other.start(node, cluster.adminKubeconfig(node));
        driverName = driver.driverName;
        deviceClass = `${ns.name}-other`;
        await bed.applyClusterScoped(deviceClassFor(driverName, { name: deviceClass }));
        await driver.registered(90_000);
        config = parseGatewayConfig(
          gatewayDocument(node, {
            resources: [{ name: GPU, simulated: { count: 1 } }],
            stateDir: join(work, 'gateway-state'),
            tokenFile,
            kubeconfig: cluster.adminKubeconfig(node),
            gateway: { podResources: { pollIntervalMs: 200, maxBackoffMs: 1000 } },
          }),
        );
        await start();
      });

      after(() => bed?.close());

      it('the other driver is seen through its ResourceSlices; a pod holds a claim on one of its devices', async () => {
        await cluster.kubectl(['apply', '-f', '-'], {
          input: JSON.stringify({
            apiVersion: 'resource.k8s.io/v1',
            kind: 'ResourceClaimTemplate',
            metadata: { name: 'acc', namespace: ns.name },
            spec: {
              spec: { devices: { requests: [{ name: 'acc', exactly: { deviceClassName: deviceClass } }] } },
            },
          }),
        });
        await cluster.kubectl(['apply', '-f', '-'], {
          input: JSON.stringify(
            pinnedPod('holder', ns.name, node.name, { claims: { acc: { template: 'acc' } } }),
          ),
        });
        await cluster.kubectl([
          'wait',
          '-n',
          ns.name,
          '--for=condition=Ready',
          'pod/holder',
          '--timeout=120s',
        ]);
        const pod = await cluster.kubectlJson<PodJson>(['get', 'pod', '-n', ns.name, 'holder']);
        podUid = pod.metadata.uid;
        const claimName = pod.status.resourceClaimStatuses![0]!.resourceClaimName;
        const claim = await cluster.kubectlJson<ClaimJson>([
          'get',
          'resourceclaim',
          '-n',
          ns.name,
          claimName,
        ]);
        ({ pool, device } = claim.status!.allocation!.devices.results[0]!);
        assert.equal(pool, node.name, 'the driver publishes one pool named after its node');

        const key = `${driverName}/${pool}/${device}`;
        const s = await client.waitForSnapshot(
          (s) => {
            const ref = s.pods[`${ns.name}/holder`]?.claims?.[0]?.claim;
            return (
              s.pods[`${ns.name}/holder`]?.phase === 'Running' &&
              !!ref &&
              s.dra?.claims[ref]?.phase === 'prepared' &&
              s.dra.devices[key]?.published === true
            );
          },
          'the pod running with its claim prepared on the other driver, its device published',
          60_000,
        );
        assert.equal(s.dra!.drivers[driverName]!.inProcess, false);
        const ref = s.pods[`${ns.name}/holder`]!.claims![0]!.claim!;
        assert.deepEqual(
          s.dra!.claims[ref]!.devices.map((d) => d.device),
          [device],
        );
        assert.equal(s.dra!.devices[key]!.sourceId, null, 'not a device of the gateway’s own');
      });

      it('taint None: ONE DeviceTaintRule, its status says "1 pod would be evicted", the pod keeps running', async () => {
        const r = await post({
          resource: driverName,
          deviceId: device,
          reason: 'drill: would this evict anything?',
          taint: 'None',
        });
        assert.equal(r.status, 201, JSON.stringify(r.body));
        faultId = r.body.id as string;
        const expected = faultTaintRule(driverName, pool, device);
        const listed = await ourRules();
        assert.equal(listed.length, 1);
        const rule = listed[0]!;
        assert.equal(rule.metadata.name, expected.name);
        assert.deepEqual(rule.spec.deviceSelector, { driver: driverName, pool, device });
        assert.equal(rule.spec.taint.effect, 'None');
        assert.equal(rule.metadata.labels?.['app.kubernetes.io/managed-by'], 'plugboard');
        assert.equal(rule.metadata.labels?.['plugboard.dev/fault'], 'simulated');
        assert.equal(
          rule.metadata.annotations?.['plugboard.dev/fault-reason'],
          'drill: would this evict anything?',
        );

        const s = await client.waitForSnapshot(
          (s) => s.faults[faultId]?.taintRuleStatus?.condition?.reason === 'NoEffect',
          "the fault active with the controller's dry-run condition",
          60_000,
        );
        const fault: FaultState = s.faults[faultId]!;
        assert.equal(fault.state, 'active');
        assert.deepEqual(fault.taintRule, expected);
        assert.equal(fault.taint, 'None');
        assert.deepEqual(
          {
            ...fault.taintRuleStatus,
            condition: { ...fault.taintRuleStatus!.condition, lastTransitionTime: '' },
          },
          {
            observed: true,
            effect: 'None',
            condition: {
              status: 'False',
              reason: 'NoEffect',
              message: DRY_RUN,
              lastTransitionTime: '',
              current: true,
            },
            podsUsingDevice: [`${ns.name}/holder`],
          },
        );
        assert.equal(s.pods[`${ns.name}/holder`]?.phase, 'Running');
        const pod = await holder();
        assert.ok(pod, 'the pod is still there');
        assert.equal(pod.metadata.deletionTimestamp, undefined, 'the pod keeps running');
        assert.equal(pod.status.phase, 'Running');
      });

      it('a restarted gateway keeps the fault and adopts its rule rather than making a second one', async () => {
        await gw.stop();
        await start();
        const s = await client.waitForSnapshot(
          (s) =>
            s.faults[faultId]?.state === 'active' &&
            s.faults[faultId]?.taintRuleStatus?.condition?.reason === 'NoEffect',
          'the fault restored and active',
          60_000,
        );
        assert.equal(s.faults[faultId]!.taintRuleStatus?.condition?.reason, 'NoEffect');
        assert.equal((await ourRules()).length, 1);
      });

      it('taint NoExecute on the same device: the same rule turns NoExecute and the pod is evicted', async () => {
        const r = await post({
          resource: driverName,
          deviceId: device,
          reason: 'drill: evict',
          taint: 'NoExecute',
        });
        assert.equal(r.status, 201, JSON.stringify(r.body));
        const id = r.body.id as string;
        await waitFor(
          'the pod evicted (gone, being deleted or failed)',
          async () => {
            const p = await holder();
            return p === null || p.metadata.deletionTimestamp !== undefined || p.status.phase === 'Failed';
          },
          60_000,
        );
        const s = await client.waitForSnapshot(
          (s) =>
            (s.pods[`${ns.name}/holder`] === undefined || s.pods[`${ns.name}/holder`]!.phase === 'Failed') &&
            s.faults[id]?.taintRuleStatus?.effect === 'NoExecute',
          'the gateway sees the pod evicted and the rule NoExecute',
          60_000,
        );
        const listed = await ourRules();
        assert.equal(listed.length, 1);
        assert.equal(listed[0]!.spec.taint.effect, 'NoExecute');
        const condition = s.faults[id]!.taintRuleStatus!.condition;
        assert.ok(
          condition?.reason === 'PodsPendingEviction' || condition?.reason === 'Completed',
          JSON.stringify(condition),
        );
      });

      it("clearing the device's faults deletes the rule", async () => {
        const res = await fetch(
          `${gw.url}/api/v1/faults?resource=${encodeURIComponent(driverName)}&deviceId=${encodeURIComponent(device)}`,
          { method: 'DELETE', headers },
        );
        assert.equal(res.status, 200);
        assert.equal(((await res.json()) as { items: unknown[] }).items.length, 2);
        await waitFor('the rule deleted', async () => (await ourRules()).length === 0, 30_000);
        await client.waitForSnapshot((s) => Object.keys(s.faults).length === 0, 'no fault left');
      });

      it('a fault whose TTL runs out deletes its rule', async () => {
        // 3 s, not 1: the rule is read back with kubectl (a process start) before it expires.
        const r = await post({
          resource: driverName,
          deviceId: device,
          reason: 'drill: three seconds',
          taint: 'NoSchedule',
          ttlSeconds: 3,
        });
        assert.equal(r.status, 201, JSON.stringify(r.body));
        assert.deepEqual(
          (await ourRules()).map((x) => x.spec.taint.effect),
          ['NoSchedule'],
        );
        await waitFor('the rule deleted at expiry', async () => (await ourRules()).length === 0, 30_000);
        await client.waitForSnapshot((s) => Object.keys(s.faults).length === 0, 'no fault left');
      });

      it('an unknown device of the other driver: 422 problem+json, no rule', async () => {
        const r = await post({ resource: driverName, deviceId: 'nope', reason: 'x', taint: 'None' });
        assert.equal(r.status, 422);
        assert.ok(
          String(r.body.detail).includes(`unknown device "nope" of DRA driver "${driverName}"`),
          String(r.body.detail),
        );
        assert.equal((await ourRules()).length, 0);
      });

      it('an extended resource backed by the other driver: a pod asking limits {<name>: 1} runs on one of its devices, in the special claim extendedResourceClaimStatus names', async () => {
        // KEP-5004 with a driver Plugboard does not run: the DeviceClass maps the name to its devices.
        const name = `${ns.name}.example.com/acc`;
        await bed.applyClusterScoped(
          deviceClassFor(driverName, { name: `${ns.name}-ext`, extendedResourceName: name }),
        );
        await cluster.kubectl(['apply', '-f', '-'], {
          input: JSON.stringify(pinnedPod('ext', ns.name, node.name, { limits: { [name]: 1 } })),
        });
        await cluster.kubectl(['wait', '-n', ns.name, '--for=condition=Ready', 'pod/ext', '--timeout=120s']);
        const pod = await cluster.kubectlJson<
          PodJson & { status: { extendedResourceClaimStatus?: PodExtendedResourceClaimStatus } }
        >(['get', 'pod', '-n', ns.name, 'ext']);
        const status = pod.status.extendedResourceClaimStatus;
        assert.ok(status, 'status.extendedResourceClaimStatus');
        assert.deepEqual(status.requestMappings, [
          { containerName: 'main', resourceName: name, requestName: 'container-0-request-0' },
        ]);
        const claim = await cluster.kubectlJson<
          ClaimJson & {
            metadata: { annotations?: Record<string, string> };
            status: { allocation: { devices: { results: { driver: string }[] } } };
          }
        >(['get', 'resourceclaim', '-n', ns.name, status.resourceClaimName]);
        assert.equal(claim.metadata.annotations?.['resource.kubernetes.io/extended-resource-claim'], 'true');
        const result = claim.status.allocation.devices.results[0]!;
        assert.equal(result.driver, driverName);
        assert.equal(result.pool, node.name);
        // The gateway's migration data for this node: served through DRA, by the other driver.
        const s = await client.waitForSnapshot(
          (x) =>
            x.extendedResources?.[name]?.pods.some((p) => p.pod === `${ns.name}/ext` && p.via === 'dra') ===
            true,
          'the gateway to show the pod holding the name through DRA',
          60_000,
        );
        const view = s.extendedResources![name]!;
        assert.equal(view.servedBy, 'dra');
        assert.deepEqual(view.drivers, [driverName]);
        assert.deepEqual(
          view.pods.map((p) => [p.pod, p.claim, p.devices]),
          [
            [
              `${ns.name}/ext`,
              `${ns.name}/${status.resourceClaimName}`,
              [`${driverName}/${node.name}/${result.device}`],
            ],
          ],
        );
        await cluster.kubectl(['delete', 'pod', '-n', ns.name, 'ext', '--wait=true', '--timeout=120s']);
      });
    });
