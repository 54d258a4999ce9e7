// The node-resources predicate: OutOf<resource> with the kubelet's message, the pod count, and the
// devices already handed out counting as allocatable (sanitizeNodeAllocatable).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { admissionRejection, TopologyError } from '../errors.js';
import { containerRequests, type PodRequests } from '../pod/requests.js';
import { checkNodeResources } from './predicate.js';

const pod = (limits: Record<string, string>): PodRequests => ({
  uid: 'u',
  initContainers: [],
  containers: [containerRequests('p', { name: 'c', resources: { limits } }, 'x', false)],
});
const devices = (allocated: number) => ({
  isDevicePluginResource: (r: string) => r === 'example.com/gpu',
  allocatedDevices: () => new Set(Array.from({ length: allocated }, (_, i) => `g${i}`)),
});
const allocatable = new Map([
  ['cpu', 4000],
  ['memory', 2 ** 30],
  ['pods', 2],
  ['example.com/gpu', 1],
]);

test('checkNodeResources: fits, or OutOf<resource> with what was requested, used and available', () => {
  checkNodeResources(pod({ cpu: '2' }), [pod({ cpu: '2' })], allocatable, devices(0));
  const refused = (spec: PodRequests, others: PodRequests[], allocated = 0) => {
    try {
      checkNodeResources(spec, others, allocatable, devices(allocated));
    } catch (err) {
      assert.ok(err instanceof TopologyError);
      return admissionRejection(err);
    }
    return null;
  };
  assert.deepEqual(refused(pod({ cpu: '3' }), [pod({ cpu: '2' })]), {
    reason: 'OutOfcpu',
    message: "Node didn't have enough resource: cpu, requested: 3000, used: 2000, capacity: 4000",
  });
  assert.equal(refused(pod({}), [pod({}), pod({})])?.reason, 'OutOfpods');
  assert.equal(refused(pod({ 'example.com/gpu': '2' }), [])?.reason, 'OutOfexample.com/gpu');
  // Two devices already handed out (their plugin gone): they count as allocatable.
  assert.equal(refused(pod({ 'example.com/gpu': '2' }), [], 2), null);
});

test('admissionRejection: a resource manager failure is an UnexpectedAdmissionError', () => {
  assert.deepEqual(admissionRejection(new Error('not enough cpus available')), {
    reason: 'UnexpectedAdmissionError',
    message: 'Allocate failed due to not enough cpus available, which is unexpected',
  });
});
