// The DeviceTaintRule status condition against the exact strings of upstream's controller tests
// (pkg/controller/devicetainteviction/device_taint_eviction_test.go, 1.37: the inProgress(…) rows).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { DeviceTaintRule } from '@plugboard/k8s-api';
import { ruleCondition, type RuleStatusCounts } from './device-taint-eviction.js';

const rule = (effect: DeviceTaintRule['spec']['taint']['effect']): DeviceTaintRule => ({
  metadata: { name: 'rule', uid: 'u1', generation: 3 },
  spec: { deviceSelector: { driver: 'd' }, taint: { key: 'k', effect } },
});
const counts = (c: Partial<RuleStatusCounts>): RuleStatusCounts => ({
  taintedSliceDevices: 0,
  taintedAllocatedDevices: 0,
  pendingPods: 0,
  pendingNamespaces: 0,
  evictedPods: 0,
  ...c,
});
const DRY_RUN_TAIL =
  'if the effect was NoExecute. This information will not be updated again. Recreate the DeviceTaintRule to trigger an update.';

const rows: {
  effect: DeviceTaintRule['spec']['taint']['effect'];
  c: Partial<RuleStatusCounts>;
  status: 'True' | 'False';
  reason: string;
  message: string;
}[] = [
  { effect: 'NoExecute', c: {}, status: 'False', reason: 'NotStarted', message: '' },
  {
    effect: 'NoExecute',
    c: { pendingPods: 1, pendingNamespaces: 1 },
    status: 'True',
    reason: 'PodsPendingEviction',
    message: '1 pod needs to be evicted in 1 namespace.',
  },
  {
    effect: 'NoExecute',
    c: { pendingPods: 2, pendingNamespaces: 2 },
    status: 'True',
    reason: 'PodsPendingEviction',
    message: '2 pods need to be evicted in 2 different namespaces.',
  },
  {
    effect: 'NoExecute',
    c: { pendingPods: 2, pendingNamespaces: 1 },
    status: 'True',
    reason: 'PodsPendingEviction',
    message: '2 pods need to be evicted in 1 namespace.',
  },
  {
    effect: 'NoExecute',
    c: { evictedPods: 1 },
    status: 'False',
    reason: 'Completed',
    message: '1 pod evicted since starting the controller.',
  },
  {
    effect: 'NoExecute',
    c: { evictedPods: 2 },
    status: 'False',
    reason: 'Completed',
    message: '2 pods evicted since starting the controller.',
  },
  {
    effect: 'None',
    c: { taintedSliceDevices: 3, taintedAllocatedDevices: 1, pendingPods: 1, pendingNamespaces: 1 },
    status: 'False',
    reason: 'NoEffect',
    message: `3 published devices selected. 1 allocated device selected. 1 pod would be evicted in 1 namespace ${DRY_RUN_TAIL}`,
  },
  {
    effect: 'None',
    c: { taintedAllocatedDevices: 3, pendingPods: 2, pendingNamespaces: 2 },
    status: 'False',
    reason: 'NoEffect',
    message: `0 published devices selected. 3 allocated devices selected. 2 pods would be evicted in 2 different namespaces ${DRY_RUN_TAIL}`,
  },
  {
    effect: 'None',
    c: { taintedSliceDevices: 1 },
    status: 'False',
    reason: 'NoEffect',
    message: `1 published device selected. 0 allocated devices selected. 0 pods would be evicted in 0 different namespaces ${DRY_RUN_TAIL}`,
  },
  {
    effect: 'NoSchedule',
    c: {},
    status: 'False',
    reason: 'OtherEffect',
    message: 'Eviction only happens for the NoExecute effect.',
  },
];

test('ruleCondition writes upstream maybeUpdateRuleStatus condition, word for word', () => {
  for (const r of rows) {
    assert.deepEqual(
      ruleCondition(rule(r.effect), counts(r.c)),
      {
        type: 'EvictionInProgress',
        status: r.status,
        reason: r.reason,
        message: r.message,
        observedGeneration: 3,
      },
      `${r.effect} ${JSON.stringify(r.c)}`,
    );
  }
});
