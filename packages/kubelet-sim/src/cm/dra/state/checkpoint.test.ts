// The DRA checkpoint is byte-compatible with a real kubelet's: the golden file of upstream's
// checkpointer_test.go reads back (its CRC-32 matches), and what the simulator writes is what Go's
// encoding/json writes for the same state.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { marshalCheckpoint, unmarshalCheckpoint } from './checkpoint.js';
import type { ClaimInfoState } from './state.js';

// pkg/kubelet/cm/dra/state/checkpointer_test.go, "single-claim-info-state".
const UPSTREAM_GOLDEN = String.raw`{"Data":"{\"kind\":\"DRACheckpoint\",\"apiVersion\":\"checkpoint.dra.kubelet.k8s.io/v1\",\"ClaimInfoStateList\":[{\"ClaimUID\":\"067798be-454e-4be4-9047-1aa06aea63f7\",\"ClaimName\":\"example\",\"Namespace\":\"default\",\"PodUIDs\":{\"139cdb46-f989-4f17-9561-ca10cfb509a6\":{}},\"DriverState\":{\"test-driver.cdi.k8s.io\":{\"Devices\":[{\"PoolName\":\"worker-1\",\"DeviceName\":\"dev-1\",\"RequestNames\":[\"test request\"],\"CDIDeviceIDs\":[\"example.com/example=cdi-example\"]}]}}}]}","Checksum":1656016162}`;

const state = (over: Partial<ClaimInfoState> = {}): ClaimInfoState => ({
  claimUid: '067798be-454e-4be4-9047-1aa06aea63f7',
  claimName: 'example',
  namespace: 'default',
  podUids: new Set(['139cdb46-f989-4f17-9561-ca10cfb509a6']),
  driverState: new Map([
    [
      'test-driver.cdi.k8s.io',
      {
        devices: [
          {
            poolName: 'worker-1',
            deviceName: 'dev-1',
            shareId: null,
            requestNames: ['test request'],
            cdiDeviceIds: ['example.com/example=cdi-example'],
          },
        ],
      },
    ],
  ]),
  ...over,
});

test("upstream's golden checkpoint reads back: its CRC-32 is the one computed here", () => {
  const [entry, ...rest] = unmarshalCheckpoint(UPSTREAM_GOLDEN);
  assert.equal(rest.length, 0);
  assert.deepEqual(entry, state());
});

test('a checkpoint is written as encoding/json writes the 1.37 structs (ShareID null, nil slices null, sorted maps)', () => {
  const two = state({
    podUids: new Set(['pod-b', 'pod-a']),
    driverState: new Map([
      ['z.example.com', { devices: [] }],
      [
        'a.example.com',
        {
          devices: [
            { poolName: 'p', deviceName: 'd<1>', shareId: 'share-1', requestNames: [], cdiDeviceIds: [] },
          ],
        },
      ],
    ]),
  });
  const text = marshalCheckpoint([two]);
  const data =
    '{"kind":"DRACheckpoint","apiVersion":"checkpoint.dra.kubelet.k8s.io/v1","Entries":[{"ClaimUID":"067798be-454e-4be4-9047-1aa06aea63f7","ClaimName":"example","Namespace":"default","PodUIDs":{"pod-a":{},"pod-b":{}},"DriverState":{"a.example.com":{"Devices":[{"PoolName":"p","DeviceName":"d\\u003c1\\u003e","ShareID":"share-1","RequestNames":null,"CDIDeviceIDs":null}]},"z.example.com":{"Devices":null}}}]}';
  const parsed = JSON.parse(text) as { Data: string; Checksum: number };
  assert.equal(parsed.Data, data);
  assert.deepEqual(Object.keys(parsed), ['Data', 'Checksum']);
  assert.deepEqual(unmarshalCheckpoint(text), [
    { ...two, driverState: new Map([...two.driverState].sort(([a], [b]) => a.localeCompare(b))) },
  ]);
});

test('a fresh checkpoint holds a nil list; an emptied one an empty list', () => {
  const dataOf = (text: string) => (JSON.parse(text) as { Data: string }).Data;
  assert.match(dataOf(marshalCheckpoint(null)), /"Entries":null}$/);
  assert.match(dataOf(marshalCheckpoint([])), /"Entries":\[\]}$/);
  assert.deepEqual(unmarshalCheckpoint(marshalCheckpoint(null)), []);
});

test('a wrong checksum is a corrupt checkpoint', () => {
  const bad = UPSTREAM_GOLDEN.replace('1656016162', '1656016163');
  assert.throws(() => unmarshalCheckpoint(bad), /checkpoint is corrupted/);
});
