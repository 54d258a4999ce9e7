// A pod's resources as the managers read them: defaulting and validation as the API server does
// them, the pod-level request with init containers and sidecars, the QoS class.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TopologyError } from '../errors.js';
import { containerRequests, effectiveRequests, qosClass, type PodRequests } from './requests.js';

const c = (limits: Record<string, string>, requests?: Record<string, string>, restartPolicy?: string) => ({
  name: 'c',
  resources: { limits, ...(requests ? { requests } : {}) },
  ...(restartPolicy ? { restartPolicy } : {}),
});

test('containerRequests: units, defaults from limits, sidecars', () => {
  const r = containerRequests(
    'p',
    c({ cpu: '1500m', memory: '1Gi', 'example.com/gpu': '2' }),
    'spec.containers[0]',
    false,
  );
  assert.deepEqual(
    [...r.requests],
    [
      ['cpu', 1500],
      ['memory', 2 ** 30],
      ['example.com/gpu', 2],
    ],
  );
  assert.equal(r.sidecar, false);
  assert.equal(containerRequests('p', c({}, {}, 'Always'), 'spec.initContainers[0]', true).sidecar, true);
});

test('containerRequests: what the API server refuses, naming the field', () => {
  const cases: [ReturnType<typeof c>, RegExp][] = [
    [c({ cpu: 'lots' }), /resources\.limits\[cpu\]: Invalid value: "lots": must be a valid quantity/],
    [c({ 'example.com/gpu': '1.5' }), /must be an integer/],
    [c({}, { 'example.com/gpu': '1' }), /Limit must be set for non overcommitable resources/],
    [c({ cpu: '1' }, { cpu: '2' }), /must be less than or equal to cpu limit of 1/],
    [c({ 'requests.example.com/gpu': '1' }), /must be a standard resource type or fully qualified/],
  ];
  for (const [container, message] of cases) {
    assert.throws(
      () => containerRequests('p', container, 'spec.containers[0]', false),
      (err: unknown) => err instanceof TopologyError && err.code === 'Invalid' && message.test(err.message),
      String(message),
    );
  }
});

test('effectiveRequests and qosClass', () => {
  const req = (limits: Record<string, string>, init = false, sidecar = false) =>
    containerRequests('p', c(limits, undefined, sidecar ? 'Always' : undefined), 'x', init);
  const pod: PodRequests = {
    uid: 'u',
    initContainers: [req({ cpu: '4', memory: '1Gi' }, true), req({ cpu: '1', memory: '1Gi' }, true, true)],
    containers: [req({ cpu: '2', memory: '1Gi' })],
  };
  // The init container runs before the sidecar starts: max(init 4, app 2 + sidecar 1) = 4 CPUs;
  // memory max(1, 1 + 1) = 2 GiB. A sidecar started before an init container adds to it.
  assert.deepEqual(
    [...effectiveRequests(pod)],
    [
      ['cpu', 4000],
      ['memory', 2 * 2 ** 30],
    ],
  );
  const sidecarFirst = { ...pod, initContainers: [...pod.initContainers].reverse() };
  assert.equal(effectiveRequests(sidecarFirst).get('cpu'), 5000, 'init 4 + the sidecar already running');
  assert.equal(qosClass(pod), 'Guaranteed');
  assert.equal(qosClass({ ...pod, containers: [req({ cpu: '2' })] }), 'Burstable');
  assert.equal(
    qosClass({ uid: 'u', initContainers: [], containers: [req({ 'example.com/gpu': '1' })] }),
    'BestEffort',
  );
});
