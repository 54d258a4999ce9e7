// DeviceTaintRule validation (pkg/apis/resource/validation ValidateDeviceTaintRule, its update and
// status update) and the device taints and tolerations it shares with ResourceSlices and claims:
// each case is the field errors a 1.37 API server reports, as kubectl prints them.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../object-store.js';
import {
  validateDeviceClass,
  validateDeviceTaintRule,
  validateResourceClaim,
  validateResourceSlice,
} from './resource.js';

const rule = (spec: Record<string, unknown>, status?: Record<string, unknown>): KubeObject => ({
  apiVersion: 'resource.k8s.io/v1',
  kind: 'DeviceTaintRule',
  metadata: { name: 'gpu-maintenance', uid: 'r1', creationTimestamp: '2026-01-01T00:00:00Z' },
  spec,
  ...(status ? { status } : {}),
});
const taint = { key: 'example.com/maintenance', value: 'planned', effect: 'NoExecute' };
/** `field: detail` as apimachinery renders each error. */
const rendered = (errors: { field: string; detail: string }[]) =>
  errors.map((e) => `${e.field}: ${e.detail}`);

const LABEL_NAME =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

describe('ValidateDeviceTaintRule', () => {
  const cases: [string, Record<string, unknown>, string[]][] = [
    [
      'a taint with a selector by driver, pool and device',
      { deviceSelector: { driver: 'gpu.example.com', pool: 'sim-node', device: 'gpu-0' }, taint },
      [],
    ],
    ['no selector (allowed: it selects no device)', { taint: { key: 'k', effect: 'NoSchedule' } }, []],
    ['effect None', { taint: { key: 'k', effect: 'None' } }, []],
    [
      'an effect that is not one of None, NoSchedule, NoExecute',
      { taint: { ...taint, effect: 'PreferNoSchedule' } },
      [
        'spec.taint.effect: Unsupported value: "PreferNoSchedule": supported values: "NoExecute", "NoSchedule", "None"',
      ],
    ],
    ['no effect', { taint: { key: 'k' } }, ['spec.taint.effect: Required value']],
    [
      'a key that is not a label name',
      { taint: { ...taint, key: 'example.com/bad key' } },
      [`spec.taint.key: Invalid value: "example.com/bad key": name part ${LABEL_NAME}`],
    ],
    [
      'no key',
      { taint: { effect: 'NoSchedule' } },
      [
        'spec.taint.key: Invalid value: "": name part must be non-empty',
        `spec.taint.key: Invalid value: "": name part ${LABEL_NAME}`,
      ],
    ],
    [
      'a key with two slashes',
      { taint: { ...taint, key: 'a/b/c' } },
      [
        `spec.taint.key: Invalid value: "a/b/c": a valid label key ${LABEL_NAME} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
      ],
    ],
    [
      'a value longer than 63 characters',
      { taint: { ...taint, value: 'v'.repeat(64) } },
      [`spec.taint.value: Invalid value: "${'v'.repeat(64)}": must be no more than 63 bytes`],
    ],
    [
      'selector names that are no driver, pool or device names',
      { deviceSelector: { driver: 'GPU', pool: 'a//b', device: 'gpu.0' }, taint },
      [
        'spec.deviceSelector.driver: Invalid value: "GPU": a lowercase RFC 1123 subdomain',
        'spec.deviceSelector.pool: Invalid value: "": a lowercase RFC 1123 subdomain',
        'spec.deviceSelector.device: Invalid value: "gpu.0": a lowercase RFC 1123 label',
      ],
    ],
    [
      'an empty driver name',
      { deviceSelector: { driver: '' }, taint },
      ['spec.deviceSelector.driver: Required value'],
    ],
  ];
  for (const [what, spec, want] of cases)
    it(what, () => {
      const got = rendered(validateDeviceTaintRule()(rule(spec), undefined));
      assert.equal(got.length, want.length, got.join('\n'));
      want.forEach((w, i) => assert.ok(got[i]?.startsWith(w), `${got[i]}\n does not start with\n${w}`));
    });

  it('an update checks the effect only when it changed: a stored unknown effect stays', () => {
    const stored = rule({ taint: { ...taint, effect: 'NoEvict' } });
    assert.deepEqual(
      validateDeviceTaintRule()(rule({ taint: { ...taint, effect: 'NoEvict', value: 'x' } }), stored),
      [],
    );
    assert.equal(
      validateDeviceTaintRule()(rule({ taint: { ...taint, effect: 'Evict' } }), stored)[0]?.field,
      'spec.taint.effect',
    );
  });

  it('status conditions: metav1 ValidateConditions and at most 8', () => {
    const condition = (type: string, extra: Record<string, unknown> = {}) => ({
      type,
      status: 'True',
      reason: 'PodsPendingEviction',
      lastTransitionTime: '2026-01-01T00:00:00Z',
      ...extra,
    });
    const validate = (conditions: unknown[]) =>
      rendered(validateDeviceTaintRule()(rule({ taint }, { conditions }), rule({ taint })));
    assert.deepEqual(validate([condition('EvictionInProgress', { message: '1 pod pending eviction' })]), []);
    assert.deepEqual(
      validate([
        condition('EvictionInProgress', { status: 'Yes', reason: '1 pod', observedGeneration: -1 }),
        condition('EvictionInProgress', { lastTransitionTime: undefined, reason: '' }),
      ]),
      [
        'status.conditions[0].status: Unsupported value: "Yes": supported values: "False", "True", "Unknown"',
        'status.conditions[0].observedGeneration: Invalid value: -1: must be greater than or equal to zero',
        `status.conditions[0].reason: Invalid value: "1 pod": a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')`,
        'status.conditions[1]: Duplicate value: "EvictionInProgress"',
        'status.conditions[1].lastTransitionTime: Required value',
        'status.conditions[1].reason: Required value',
      ],
    );
    assert.deepEqual(validate(Array.from({ length: 9 }, (_, i) => condition(`example.com/c${i}`))), [
      'status.conditions: Too many: 9: must have at most 8 items',
    ]);
  });
});

describe('device taints and tolerations elsewhere follow the same rules', () => {
  it('a ResourceSlice taint key is a label name (dashes and dots allowed), its effect may be None', () => {
    const slice: KubeObject = {
      apiVersion: 'resource.k8s.io/v1',
      kind: 'ResourceSlice',
      metadata: { name: 'sim-node-gpu', uid: 's1', creationTimestamp: '2026-01-01T00:00:00Z' },
      spec: {
        driver: 'gpu.example.com',
        nodeName: 'sim-node',
        pool: { name: 'sim-node', generation: 1, resourceSliceCount: 1 },
        devices: [
          {
            name: 'gpu-0',
            taints: [
              { key: 'gpu.example.com/unhealthy-ecc', effect: 'None' },
              { key: 'k', effect: 'Evict' },
            ],
          },
        ],
      },
    };
    assert.deepEqual(rendered(validateResourceSlice()(slice, undefined)), [
      'spec.devices[0].taints[1].effect: Unsupported value: "Evict": supported values: "NoExecute", "NoSchedule", "None"',
    ]);
  });

  it('a claim toleration: label key, label value for Equal, none for Exists, effects incl. None', () => {
    const claim = (tolerations: unknown[]): KubeObject => ({
      apiVersion: 'resource.k8s.io/v1',
      kind: 'ResourceClaim',
      metadata: { name: 'c', namespace: 'default', uid: 'c1', creationTimestamp: '2026-01-01T00:00:00Z' },
      spec: {
        devices: {
          requests: [{ name: 'gpu', exactly: { deviceClassName: 'gpu.example.com', tolerations } }],
        },
      },
    });
    const f = 'spec.devices.requests[0].exactly.tolerations';
    assert.deepEqual(
      rendered(
        validateResourceClaim()(claim([{ key: 'example.com/maintenance', effect: 'None' }]), undefined),
      ),
      [],
    );
    assert.deepEqual(
      rendered(
        validateResourceClaim()(
          claim([
            { key: 'k', operator: 'Exists', value: 'v' },
            { key: 'k', value: 'a b' },
          ]),
          undefined,
        ),
      ).map((r) => r.slice(0, r.indexOf(':', r.indexOf(':') + 1))),
      [`${f}[0].value: Invalid value`, `${f}[1].value: Invalid value`],
    );
  });
});

describe('partitionable devices: counter sets and devices in separate slices (1.35+)', () => {
  const slice = (spec: Record<string, unknown>): KubeObject => ({
    apiVersion: 'resource.k8s.io/v1',
    kind: 'ResourceSlice',
    metadata: { name: 'sim-node-gpu', uid: 's1', creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: {
      driver: 'gpu.example.com',
      nodeName: 'sim-node',
      pool: { name: 'sim-node', generation: 1, resourceSliceCount: 2 },
      ...spec,
    },
  });
  const counters = [{ name: 'gpu-0', counters: { memory: { value: '40Gi' } } }];
  const partition = (name: string) => ({
    name,
    consumesCounters: [{ counterSet: 'gpu-0', counters: { memory: { value: '10Gi' } } }],
  });

  it('a slice with both sharedCounters and devices is refused at spec', () => {
    assert.deepEqual(
      rendered(
        validateResourceSlice()(slice({ sharedCounters: counters, devices: [partition('q0')] }), undefined),
      ),
      ['spec: Invalid value: "": only one of `sharedCounters` or `devices` is allowed'],
    );
    // An empty list is a list: Go decodes `devices: []` into a non-nil slice.
    assert.equal(
      rendered(validateResourceSlice()(slice({ sharedCounters: counters, devices: [] }), undefined)).length,
      1,
    );
  });

  it('either one alone is valid', () => {
    assert.deepEqual(rendered(validateResourceSlice()(slice({ sharedCounters: counters }), undefined)), []);
    assert.deepEqual(rendered(validateResourceSlice()(slice({ devices: [partition('q0')] }), undefined)), []);
  });

  it('devices that consume counters: at most 64 per slice', () => {
    const devices = Array.from({ length: 65 }, (_, i) => partition(`q${i}`));
    assert.deepEqual(rendered(validateResourceSlice()(slice({ devices }), undefined)), [
      'spec.devices: Too many: 65: must have at most 64 items',
    ]);
    const plain = Array.from({ length: 65 }, (_, i) => ({ name: `d${i}` }));
    assert.deepEqual(rendered(validateResourceSlice()(slice({ devices: plain }), undefined)), []);
  });
});

describe('DeviceClass spec.extendedResourceName (format=k8s-extended-resource-name, upstream strfmt_test.go)', () => {
  const f = 'spec.extendedResourceName';
  const cases: [string, string[]][] = [
    ['example.com/gpu', []],
    ['example-kub.io/foo', []],
    [
      'foo',
      [`${f}: Invalid value: "foo": a name must be a domain-prefixed path, such as 'example.com/my-prop'`],
    ],
    [
      'kubernetes.io/gpu',
      [`${f}: Invalid value: "kubernetes.io/gpu": must not have "kubernetes.io/" domain`],
    ],
    [
      'something.kubernetes.io/foo',
      [`${f}: Invalid value: "something.kubernetes.io/foo": must not have "kubernetes.io/" domain`],
    ],
    [
      'requests.example.com/foo',
      [`${f}: Invalid value: "requests.example.com/foo": must not have "requests." prefix`],
    ],
    [
      `example.com/${'a'.repeat(64)}`,
      [`${f}: Invalid value: "example.com/${'a'.repeat(64)}": name part must be no more than 63 bytes`],
    ],
  ];
  for (const [name, want] of cases)
    it(name, () => {
      const obj: KubeObject = {
        apiVersion: 'resource.k8s.io/v1',
        kind: 'DeviceClass',
        metadata: { name: 'gpu', uid: 'c1', creationTimestamp: '2026-01-01T00:00:00Z' },
        spec: { extendedResourceName: name },
      };
      assert.deepEqual(rendered(validateDeviceClass()(obj, undefined)), want);
    });
});
