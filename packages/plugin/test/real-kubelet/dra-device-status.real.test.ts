// Device status (KEP-4817) on both kinds of node, one suite body, the real kubectl on both: a
// Plugboard DRA driver with `deviceStatus` prepares a claim the scheduler allocated, and the claim's
// `status.devices` then carries its entry (`Ready` True, the driver's data); a write naming a device
// the claim was not allocated is refused as Invalid with 1.37's field error, word for word on both
// kinds. On the real API server only (kubelet-sim's API slice has no identities: one control token,
// docs/KUBELET-SIM-FIDELITY.md), the per-driver authorization 1.36 added
// (pkg/registry/resource/utils.go AuthorizedForDeviceStatus): a ServiceAccount without
// `resourceclaims/status` is Forbidden (403); with it but without `resourceclaims/driver` the write is
// Invalid with a Forbidden cause; the chart's grant (`associated-node:patch`, resourceNames the
// driver) lets a token bound to a pod on the claim's node write, and not an unbound token (that
// would need `arbitrary-node:patch`).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  openTestBed,
  PAUSE_IMAGE,
  pinnedPod,
  removeDraObjects,
  testClusterKinds,
  waitFor,
  type ClusterNode,
  type RealCluster,
  type TestBed,
  type TestCluster,
  type TestNamespace,
} from '@plugboard/testbed';
import {
  DraDriver,
  SimulatedSource,
  kubeApiFromKubeConfig,
  type AllocatedDeviceStatus,
  type DeviceStatusOutcome,
  type DraKubeApi,
} from '../../src/index.js';

const DRIVER = 'status.plugboard.example';

interface ClaimJson {
  metadata: { name: string; uid: string };
  status?: {
    allocation?: {
      devices: { results: { request: string; driver: string; pool: string; device: string }[] };
    };
    devices?: AllocatedDeviceStatus[];
  };
}

/** kubectl's refusal text of a call expected to fail. */
async function refusal(call: Promise<unknown>): Promise<string> {
  try {
    await call;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
  assert.fail('the write was accepted');
}

for (const kind of testClusterKinds())
  describe(`device status (status.devices) on the ${kind} kubelet`, () => {
    let bed: TestBed;
    let cluster: TestCluster;
    let node: ClusterNode;
    let ns: TestNamespace;
    let driver: DraDriver;
    let work: string;
    let deviceClass: string;
    let claim: ClaimJson;
    const statusEvents: DeviceStatusOutcome[] = [];

    /** `kubectl patch … --subresource=status` of the claim's status.devices, as the admin. */
    const patchDevices = (devices: unknown[]) =>
      cluster.kubectl([
        'patch',
        'resourceclaim',
        '-n',
        ns.name,
        claim.metadata.name,
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({ status: { devices } }),
      ]);

    before(async () => {
      bed = await openTestBed(kind, 'dst', { namespace: 'devstatus' });
      ({ work, cluster, node, ns } = bed);
      bed.defer(() => removeDraObjects(cluster, node.name));
      driver = new DraDriver({
        driverName: DRIVER,
        nodeName: node.name,
        source: new SimulatedSource({ count: 4, numaNodes: [0], idPrefix: 'gpu' }),
        kube: await kubeApiFromKubeConfig({ kubeconfig: cluster.adminKubeconfig(node) }),
        pluginsDir: node.pluginsDir,
        pluginsRegistryDir: node.pluginsRegistryDir,
        cdiDir: join(work, 'cdi'),
        deviceStatus: {
          report: ({ device }) => ({
            conditions: [{ type: 'Healthy', status: 'True', reason: 'Checked', message: '' }],
            data: { slot: device.deviceName, firmware: '1.2.3' },
          }),
        },
      });
      driver.on('device-status', (e) => statusEvents.push(...e.claims));
      bed.defer(() => driver.stop());
      await driver.start();
      deviceClass = `${ns.name}-gpu`;
      await bed.applyClusterScoped(driver.deviceClass({ name: deviceClass }));
      await waitFor('the kubelet to register the driver', () => driver.registration().phase === 'registered');
      await waitFor('the driver’s ResourceSlice', async () => {
        const list = await cluster.kubectlJson<{ items: { spec: { driver: string } }[] }>([
          'get',
          'resourceslices',
          '--field-selector',
          `spec.nodeName=${node.name}`,
        ]);
        return list.items.some((s) => s.spec.driver === DRIVER);
      });
    });

    after(() => bed?.close());

    it("the driver's status.devices entry appears on the claim once the kubelet prepared it: Ready True and the driver's data", async () => {
      await cluster.kubectl(['apply', '-f', '-'], {
        input: JSON.stringify({
          apiVersion: 'v1',
          kind: 'List',
          items: [
            {
              apiVersion: 'resource.k8s.io/v1',
              kind: 'ResourceClaim',
              metadata: { name: 'one', namespace: ns.name },
              spec: { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: deviceClass } }] } },
            },
            pinnedPod('work', ns.name, node.name, { claims: { gpu: { claim: 'one' } } }),
          ],
        }),
      });
      await cluster.kubectl(['wait', '-n', ns.name, '--for=condition=Ready', 'pod/work', '--timeout=120s']);
      // Written before NodePrepareResources answered: the claim says so once the pod is Ready.
      claim = await cluster.kubectlJson<ClaimJson>(['get', 'resourceclaim', '-n', ns.name, 'one']);
      const result = claim.status?.allocation?.devices.results[0];
      assert.ok(result, 'allocated');
      assert.deepEqual(statusEvents, [
        { uid: claim.metadata.uid, namespace: ns.name, name: 'one', written: 1, error: null },
      ]);
      const entries = claim.status?.devices ?? [];
      assert.equal(entries.length, 1);
      const [entry] = entries;
      assert.ok(entry);
      assert.deepEqual(
        { driver: entry.driver, pool: entry.pool, device: entry.device, data: entry.data },
        {
          driver: DRIVER,
          pool: node.name,
          device: result.device,
          data: { slot: result.device, firmware: '1.2.3' },
        },
      );
      assert.deepEqual(
        entry.conditions?.map((c) => [c.type, c.status, c.reason, c.message]),
        [
          ['Ready', 'True', 'Prepared', `prepared by ${DRIVER} on ${node.name}`],
          ['Healthy', 'True', 'Checked', ''],
        ],
      );
      assert.match(entry.conditions?.[0]?.lastTransitionTime ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    });

    it('a status.devices entry for a device not allocated to the claim is refused as Invalid, as 1.37 words it', async () => {
      const allocated = claim.status!.allocation!.devices.results[0]!.device;
      const other = driver.sliceDevices().find((d) => d.name !== allocated)!.name;
      const message = await refusal(
        patchDevices([
          ...(claim.status?.devices ?? []),
          { driver: DRIVER, pool: node.name, device: other, conditions: [] },
        ]),
      );
      assert.match(
        message,
        new RegExp(
          `The ResourceClaim "one" is invalid: status\\.devices\\[1\\]: Invalid value: ${JSON.stringify({
            Driver: DRIVER,
            Pool: node.name,
            Device: other,
            ShareID: '',
          }).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: must be an allocated device in the claim`,
        ),
      );
      const after = await cluster.kubectlJson<ClaimJson>(['get', 'resourceclaim', '-n', ns.name, 'one']);
      assert.deepEqual(after.status?.devices, claim.status?.devices, 'nothing was written');
    });

    // The per-driver authorization needs identities: the real API server's RBAC. kubelet-sim's API
    // slice has one control token and no ServiceAccounts (docs/KUBELET-SIM-FIDELITY.md).
    if (kind === 'real')
      it('an identity without resourceclaims/status is Forbidden; without resourceclaims/driver Invalid (Forbidden cause); the chart’s associated-node:patch serves a pod-bound token only', async () => {
        const real = cluster as RealCluster;
        const sa = 'reporter';
        await cluster.kubectl(['create', 'serviceaccount', sa, '-n', ns.name]);
        // A pod of that ServiceAccount on the claim's node, as a driver's DaemonSet pod is: a token
        // bound to it carries the node (authentication.kubernetes.io/node-name).
        await cluster.kubectl(['apply', '-f', '-'], {
          input: JSON.stringify({
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name: 'driver', namespace: ns.name },
            spec: {
              nodeName: node.name,
              serviceAccountName: sa,
              containers: [{ name: 'main', image: PAUSE_IMAGE }],
            },
          }),
        });
        // The driver's own call (DraKubeApi.patchResourceClaimStatus: a merge patch, no GET first,
        // which `kubectl patch` would need) with each token.
        const unbound = await kubeApiFromKubeConfig({
          kubeconfig: (await real.serviceAccount(ns.name, sa, { dir: work })).kubeconfig,
        });
        const bound = await kubeApiFromKubeConfig({
          kubeconfig: (await real.serviceAccount(ns.name, sa, { dir: work, boundPod: 'driver' })).kubeconfig,
        });
        const patchAs = async (api: DraKubeApi, devices: AllocatedDeviceStatus[]) => {
          const current = await cluster.kubectlJson<ClaimJson & { metadata: { resourceVersion: string } }>([
            'get',
            'resourceclaim',
            '-n',
            ns.name,
            'one',
          ]);
          await api.patchResourceClaimStatus(ns.name, 'one', {
            metadata: { uid: current.metadata.uid, resourceVersion: current.metadata.resourceVersion },
            status: { devices },
          });
        };
        const changed: AllocatedDeviceStatus[] = [
          {
            ...claim.status!.devices![0]!,
            conditions: [
              {
                type: 'Ready',
                status: 'False',
                reason: 'Drained',
                message: 'by the test',
                lastTransitionTime: '2026-01-01T00:00:00Z',
              },
            ],
          },
        ];
        const username = `system:serviceaccount:${ns.name}:${sa}`;
        // No role at all: RBAC refuses the status subresource itself.
        assert.match(
          await refusal(patchAs(unbound, changed)),
          new RegExp(
            `HTTP 403: resourceclaims\\.resource\\.k8s\\.io "one" is forbidden: User "${username}" cannot patch resource "resourceclaims/status" in API group "resource.k8s.io" in the namespace "${ns.name}"`,
          ),
        );
        const role = (rules: unknown[]) =>
          cluster.kubectl(['apply', '-f', '-'], {
            input: JSON.stringify({
              apiVersion: 'v1',
              kind: 'List',
              items: [
                {
                  apiVersion: 'rbac.authorization.k8s.io/v1',
                  kind: 'Role',
                  metadata: { name: sa, namespace: ns.name },
                  rules,
                },
                {
                  apiVersion: 'rbac.authorization.k8s.io/v1',
                  kind: 'RoleBinding',
                  metadata: { name: sa, namespace: ns.name },
                  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: sa },
                  subjects: [{ kind: 'ServiceAccount', name: sa, namespace: ns.name }],
                },
              ],
            }),
          });
        const statusRule = {
          apiGroups: ['resource.k8s.io'],
          resources: ['resourceclaims/status'],
          verbs: ['patch'],
        };
        await role([statusRule]);
        // RBAC is served from the API server's informers: until the binding is seen the refusal is
        // still the 403 above; then the registry's own check answers.
        const invalid = await waitFor('the status write to reach the per-driver check', async () => {
          const text = await refusal(patchAs(unbound, changed));
          return text.includes('HTTP 422') && text;
        });
        assert.match(
          invalid,
          new RegExp(
            `HTTP 422: ResourceClaim\\.resource\\.k8s\\.io "one" is invalid: status\\.devices: Forbidden: changing status\\.devices requires resource="resourceclaims/driver", verb="\\[arbitrary-node:patch\\]" permission: resourceclaims\\.resource\\.k8s\\.io "${DRIVER.replaceAll('.', '\\.')}" is forbidden: User "${username}" cannot arbitrary-node:patch resource "resourceclaims/driver" in API group "resource\\.k8s\\.io" in the namespace "${ns.name}"`,
          ),
        );
        // The chart's grant (deploy/helm/plugboard/templates/gateway-rbac.yaml).
        await role([
          statusRule,
          {
            apiGroups: ['resource.k8s.io'],
            resources: ['resourceclaims/driver'],
            resourceNames: [DRIVER],
            verbs: ['associated-node:patch'],
          },
        ]);
        await waitFor('the pod-bound token to write its node’s claim', async () => {
          try {
            await patchAs(bound, changed);
            return true;
          } catch (err) {
            if (/cannot associated-node:patch|cannot arbitrary-node:patch/.test(String(err))) return false;
            throw err;
          }
        });
        const written = await cluster.kubectlJson<ClaimJson>(['get', 'resourceclaim', '-n', ns.name, 'one']);
        assert.equal(written.status?.devices?.[0]?.conditions?.[0]?.reason, 'Drained');
        // Not associated with the claim's node: associated-node:patch does not apply.
        assert.match(
          await refusal(patchAs(unbound, claim.status!.devices!)),
          /status\.devices: Forbidden: changing status\.devices requires resource="resourceclaims\/driver", verb="\[arbitrary-node:patch\]"/,
        );
      });
  });
