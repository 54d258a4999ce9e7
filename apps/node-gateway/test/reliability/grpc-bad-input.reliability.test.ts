// Bad input on the device plugin's gRPC socket, the way a buggy or hostile kubelet-side client could
// send it: Allocate / GetPreferredAllocation / PreStartContainer with empty, huge (10,000 IDs),
// duplicated, unknown and unhealthy IDs and sizes beyond what is available, plus raw garbage bytes
// on the Unix socket. Every case answers INVALID_ARGUMENT naming the bad IDs (never a crash, never
// INTERNAL), and the plugin keeps serving the kubelet afterwards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { credentials, status, type ServiceError } from '@grpc/grpc-js';
import { deviceplugin } from '@plugboard/proto';
import { report } from './figures.js';
import { GPU, startRig, TOKEN, waitFor } from './harness.js';

const HUGE = 10_000;

type Client = InstanceType<typeof deviceplugin.DevicePluginClient>;

function call<Req>(
  client: Client,
  method: 'allocate' | 'getPreferredAllocation' | 'preStartContainer',
  req: Req,
) {
  return new Promise<{ err: ServiceError | null; res: unknown }>((resolve) => {
    const fn = client[method].bind(client) as unknown as (
      r: Req,
      opts: { deadline: number },
      cb: (err: ServiceError | null, res: unknown) => void,
    ) => void;
    fn(req, { deadline: Date.now() + 10_000 }, (err, res) => resolve({ err, res }));
  });
}

test(`gRPC bad input (empty, ${HUGE.toLocaleString('en')} IDs, duplicated, unknown, unhealthy, oversize, garbage bytes): INVALID_ARGUMENT naming IDs, server stays up`, async (t) => {
  const rig = await startRig({
    resources: [{ name: GPU, simulated: { count: 8, numaNodes: [0, 1] }, preStart: { delayMs: 0 } }],
  });
  t.after(() => rig.stop());
  const socket = join(rig.sim.devicePluginDir, 'plugboard.example-gpu.sock');
  const client = new deviceplugin.DevicePluginClient(`unix://${socket}`, credentials.createInsecure());
  t.after(() => client.close());

  const r = await fetch(`${rig.gw.url}/api/v1/faults`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${TOKEN}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ resource: GPU, deviceId: 'gpu-5', reason: 'unhealthy for the test' }),
  });
  assert.equal(r.status, 201);
  await waitFor('gpu-5 unhealthy in the kubelet', () => rig.sim.state().resources[GPU]?.allocatable === 7);

  const huge = Array.from({ length: HUGE }, (_, i) => `bogus-${i}`);
  const alloc = (ids: string[][]) => ({ containerRequests: ids.map((devicesIds) => ({ devicesIds })) });
  const pref = (available: string[], mustInclude: string[], size: number) => ({
    containerRequests: [
      { availableDeviceIDs: available, mustIncludeDeviceIDs: mustInclude, allocationSize: size },
    ],
  });
  const cases: {
    name: string;
    method: 'allocate' | 'getPreferredAllocation' | 'preStartContainer';
    req: unknown;
    names: RegExp;
  }[] = [
    {
      name: 'Allocate without container requests',
      method: 'allocate',
      req: alloc([]),
      names: /no container requests/,
    },
    {
      name: 'Allocate with an empty ID list',
      method: 'allocate',
      req: alloc([[]]),
      names: /container request 0 has no device IDs/,
    },
    {
      name: 'Allocate an unknown ID',
      method: 'allocate',
      req: alloc([['gpu-0', 'gpu-99']]),
      names: /unknown device IDs: gpu-99/,
    },
    {
      name: 'Allocate an unhealthy ID',
      method: 'allocate',
      req: alloc([['gpu-5']]),
      names: /unhealthy device IDs: gpu-5/,
    },
    {
      name: 'Allocate a duplicated ID',
      method: 'allocate',
      req: alloc([['gpu-1'], ['gpu-1', 'gpu-2']]),
      names: /duplicated device IDs: gpu-1/,
    },
    {
      name: `Allocate ${HUGE} unknown IDs`,
      method: 'allocate',
      req: alloc([huge]),
      names: /unknown device IDs: bogus-0, bogus-1, .*and \d+ more/,
    },
    {
      name: `Allocate ${HUGE} copies of one ID`,
      method: 'allocate',
      req: alloc([Array<string>(HUGE).fill('gpu-0')]),
      names: /duplicated device IDs: gpu-0/,
    },
    {
      name: 'GetPreferredAllocation size > available',
      method: 'getPreferredAllocation',
      req: pref(['gpu-0', 'gpu-1'], [], 3),
      names: /cannot choose 3 devices: 2 available/,
    },
    {
      name: 'GetPreferredAllocation size 0',
      method: 'getPreferredAllocation',
      req: pref(['gpu-0'], [], 0),
      names: /size must be a positive integer/,
    },
    {
      name: 'GetPreferredAllocation must-include > size',
      method: 'getPreferredAllocation',
      req: pref(['gpu-0', 'gpu-1'], ['gpu-0', 'gpu-1'], 1),
      names: /must-include has 2 devices \(gpu-0, gpu-1\)/,
    },
    {
      name: 'GetPreferredAllocation unknown available IDs',
      method: 'getPreferredAllocation',
      req: pref(['gpu-0', 'gpu-99'], [], 1),
      names: /unknown device IDs: gpu-99/,
    },
    {
      name: `GetPreferredAllocation ${HUGE} unknown IDs`,
      method: 'getPreferredAllocation',
      req: pref(huge, [], 2),
      names: /unknown device IDs: bogus-0, .*and \d+ more/,
    },
    {
      name: 'GetPreferredAllocation must-include not available',
      method: 'getPreferredAllocation',
      req: pref(['gpu-0', 'gpu-1'], ['gpu-7'], 2),
      names: /gpu-7/,
    },
    {
      name: 'PreStartContainer unknown IDs',
      method: 'preStartContainer',
      req: { devicesIds: ['gpu-0', 'nope'] },
      names: /unknown device IDs: nope/,
    },
    {
      name: 'PreStartContainer no IDs',
      method: 'preStartContainer',
      req: { devicesIds: [] },
      names: /no device IDs/,
    },
    {
      name: `PreStartContainer ${HUGE} unknown IDs`,
      method: 'preStartContainer',
      req: { devicesIds: huge },
      names: /unknown device IDs: bogus-0, .*and \d+ more/,
    },
  ];
  const failures: string[] = [];
  for (const c of cases) {
    const { err } = await call(client, c.method, c.req);
    if (!err) failures.push(`${c.name}: succeeded`);
    else if (err.code !== status.INVALID_ARGUMENT)
      failures.push(`${c.name}: code ${status[err.code]} (${err.details.slice(0, 200)})`);
    else if (!c.names.test(err.details))
      failures.push(`${c.name}: details do not name the IDs: ${err.details.slice(0, 300)}`);
    else if (err.details.length > 2048)
      failures.push(`${c.name}: details of ${err.details.length} characters`);
  }
  assert.deepEqual(failures, []);

  // Garbage on the socket: random bytes, a truncated HTTP/2 preface, an HTTP/1 request.
  const garbage = [
    Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256)),
    Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x04\xff\xff\xff\xff'),
    Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'),
  ];
  for (const bytes of garbage) {
    await new Promise<void>((resolve) => {
      const s = createConnection(socket);
      s.on('error', () => resolve());
      s.on('close', () => resolve());
      s.on('connect', () => {
        s.end(bytes);
        setTimeout(() => s.destroy(), 500).unref();
      });
    });
  }
  // Still serving: a good Allocate works and the kubelet still admits pods through the plugin.
  const ok = await call(client, 'allocate', alloc([['gpu-0', 'gpu-1']]));
  assert.equal(ok.err, null);
  await rig.sim.admitPod({
    metadata: { name: 'after-garbage', namespace: 'default' },
    spec: { restartPolicy: 'Always', containers: [{ name: 'c', resources: { limits: { [GPU]: 2 } } }] },
  });
  assert.equal(rig.sim.state().resources[GPU]!.registered, true);
  report(t, {
    scenario: 'grpc-bad-input',
    figure: 'bad requests answered INVALID_ARGUMENT',
    value: cases.length,
  });
  report(t, { scenario: 'grpc-bad-input', figure: 'garbage byte streams survived', value: garbage.length });
});
