// snapshot.extendedResources: per extended resource name, device plugin or DRA (KEP-5004) and the pods
// holding it each way — from the Node, the DeviceClasses, the pods' extendedResourceClaimStatus and
// the special claims; 'unknown'/null where the inputs do not say.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { DraClaimState, PodState } from '@plugboard/api';
import { containerState } from '@plugboard/api/testing';
import type { DeviceClass } from '@plugboard/k8s-api';
import { buildSnapshot, parseCount } from './build.js';
import { buildExtendedResources, type ExtendedResourcesInputs } from './extended-resources.js';
import { summarize } from './summary.js';
import { modelInputs, runningPod } from './test-fixtures.js';

const GPU = 'example.com/gpu';
const DRIVER = 'gpu.example.com';

const deviceClass = (
  name: string,
  extendedResourceName?: string,
  created = '2026-01-01T00:00:00Z',
): DeviceClass => ({
  metadata: { name, creationTimestamp: created },
  spec: { ...(extendedResourceName ? { extendedResourceName } : {}) },
});

const node = (allocatable: Record<string, string>): V1Node => ({
  metadata: { name: 'n1' },
  status: { capacity: allocatable, allocatable },
});

/** A pod asking `limits: {[resource]: n}` in container main; with `special`, its extendedResourceClaimStatus. */
function podAsking(name: string, resource: string, n: number, special?: string): V1Pod {
  const pod = runningPod(name, 'ml');
  pod.spec!.containers[0]!.resources = {
    limits: { [resource]: String(n) },
    requests: { [resource]: String(n) },
  };
  if (special)
    pod.status!.extendedResourceClaimStatus = {
      resourceClaimName: special,
      requestMappings: [
        { containerName: 'main', resourceName: resource, requestName: 'container-0-request-0' },
      ],
    };
  return pod;
}

function podState(name: string, devices: Record<string, string[]>): PodState {
  return {
    key: `ml/${name}`,
    namespace: 'ml',
    name,
    phase: 'Running',
    reason: null,
    containers: [containerState({ devices })],
    affectedByUnhealthyDevice: false,
    numaAlignment: { verdict: 'no-preference', numaNodes: [], reason: '' },
  };
}

function specialClaim(name: string, device: string): DraClaimState {
  return {
    key: `ml/${name}`,
    namespace: 'ml',
    name,
    uid: 'u',
    owner: null,
    requests: [],
    phase: 'prepared',
    devices: [
      {
        request: 'container-0-request-0',
        driver: DRIVER,
        pool: 'n1',
        device,
        deviceKey: `${DRIVER}/n1/${device}`,
        adminAccess: false,
      },
    ],
    reservedFor: [],
    health: null,
    pendingReason: null,
    deleting: false,
    extendedResources: true,
  };
}

const inputs = (over: Partial<ExtendedResourcesInputs>): ExtendedResourcesInputs => ({
  node: null,
  resources: {},
  deviceClasses: [],
  pods: [],
  podStates: {},
  claims: {},
  publishesDraDevices: true,
  ...over,
});

describe('extended resources by API (snapshot.extendedResources)', () => {
  it('a device plugin serves the name while the Node has it allocatable; its pods hold it through the plugin', () => {
    const view = buildExtendedResources(
      inputs({
        node: node({ [GPU]: '8' }),
        deviceClasses: [deviceClass('gpu', GPU)],
        pods: [podAsking('train', GPU, 2)],
        podStates: { 'ml/train': podState('train', { [GPU]: [`${GPU}/gpu-0`, `${GPU}/gpu-1`] }) },
      }),
      parseCount,
    );
    assert.deepEqual(view[GPU], {
      name: GPU,
      servedBy: 'device-plugin',
      nodeStatus: { capacity: 8, allocatable: 8 },
      deviceClasses: ['gpu'],
      deviceClass: 'gpu',
      drivers: [],
      pods: [
        {
          pod: 'ml/train',
          container: 'main',
          count: 2,
          via: 'device-plugin',
          claim: null,
          request: null,
          devices: [`${GPU}/gpu-0`, `${GPU}/gpu-1`],
        },
      ],
    });
  });

  it('DRA serves a name the Node does not list and a DeviceClass maps; the pod holds it through its special claim', () => {
    const view = buildExtendedResources(
      inputs({
        node: node({}),
        deviceClasses: [deviceClass('gpu', GPU)],
        pods: [podAsking('render', GPU, 1, 'render-extended-resources-abcde')],
        podStates: { 'ml/render': podState('render', {}) },
        claims: {
          'ml/render-extended-resources-abcde': specialClaim('render-extended-resources-abcde', 'gpu-3'),
        },
      }),
      parseCount,
    );
    assert.equal(view[GPU]?.servedBy, 'dra');
    assert.equal(view[GPU]?.nodeStatus, null);
    assert.deepEqual(view[GPU]?.drivers, [DRIVER]);
    assert.deepEqual(view[GPU]?.pods, [
      {
        pod: 'ml/render',
        container: 'main',
        count: 1,
        via: 'dra',
        claim: 'ml/render-extended-resources-abcde',
        request: 'container-0-request-0',
        devices: [`${DRIVER}/n1/gpu-3`],
      },
    ]);
  });

  it('an allocatable of 0 no longer keeps the name with the device plugin; the newest class is picked', () => {
    const view = buildExtendedResources(
      inputs({
        node: node({ [GPU]: '0' }),
        deviceClasses: [
          deviceClass('b-old', GPU, '2026-01-01T00:00:00Z'),
          deviceClass('a-new', GPU, '2026-02-01T00:00:00Z'),
          deviceClass('z-new', GPU, '2026-02-01T00:00:00Z'),
        ],
      }),
      parseCount,
    );
    assert.equal(view[GPU]?.servedBy, 'dra');
    assert.deepEqual(view[GPU]?.nodeStatus, { capacity: 0, allocatable: 0 });
    assert.deepEqual(view[GPU]?.deviceClasses, ['a-new', 'b-old', 'z-new']);
    assert.equal(view[GPU]?.deviceClass, 'a-new');
  });

  it('a class maps the name but the node publishes no DRA device: none (a pod would wait here), the class still listed', () => {
    const view = buildExtendedResources(
      inputs({ deviceClasses: [deviceClass('gpu', GPU)], publishesDraDevices: false }),
      parseCount,
    );
    assert.equal(view[GPU]?.servedBy, 'none');
    assert.deepEqual(view[GPU]?.deviceClasses, ['gpu']);
  });

  it('says what it does not know: DeviceClasses unread (null, never "dra"), a pod not yet holding devices ("unknown")', () => {
    const view = buildExtendedResources(
      inputs({
        deviceClasses: null,
        pods: [podAsking('waiting', GPU, 1)],
        podStates: {},
      }),
      parseCount,
    );
    assert.equal(view[GPU]?.servedBy, 'none');
    assert.equal(view[GPU]?.deviceClasses, null);
    assert.equal(view[GPU]?.pods[0]?.via, 'unknown');
  });

  it('the implicit deviceclass.resource.kubernetes.io/<class> name maps too; cpu and memory are not extended resources', () => {
    const implicit = 'deviceclass.resource.kubernetes.io/fpga';
    const pod = podAsking('fpga', implicit, 1, 'fpga-extended-resources-xyzab');
    pod.spec!.containers[0]!.resources!.limits!['cpu'] = '2';
    const view = buildExtendedResources(
      inputs({ deviceClasses: [deviceClass('fpga')], pods: [pod] }),
      parseCount,
    );
    assert.deepEqual(Object.keys(view), [implicit]);
    assert.equal(view[implicit]?.servedBy, 'dra');
    assert.equal(view[implicit]?.pods[0]?.via, 'dra');
    assert.deepEqual(
      view[implicit]?.pods[0]?.devices,
      [],
      'the claim is not in dra.claims: no devices named',
    );
  });

  it('is in the snapshot and the summary (the cluster view joins the nodes)', () => {
    const snap = buildSnapshot(
      modelInputs({
        kube: {
          node: node({ [GPU]: '4' }),
          pods: [],
          dra: {
            slices: [],
            claims: [],
            taintRules: [],
            deviceClasses: [deviceClass('gpu', GPU)],
            notServed: {},
          },
        },
      }),
    );
    assert.equal(snap.extendedResources?.[GPU]?.servedBy, 'device-plugin');
    assert.deepEqual(summarize(snap).extendedResources, snap.extendedResources);
  });
});
