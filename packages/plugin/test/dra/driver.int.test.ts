// A DRA driver against a test kubelet (plugin watcher + DRAPlugin client over real Unix sockets)
// and a fake API server (real HTTP, read through @kubernetes/client-node): registration, claim
// preparation with CDI specs and a checkpoint, idempotency, per-claim errors, restarts, deleted
// sockets, and a device status write the API server refuses.
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtemp, readFile, readdir, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentials, makeGenericClientConstructor, status, type ServiceError } from '@grpc/grpc-js';
import { drav1 } from '@plugboard/proto';
import {
  DraDriver,
  kubeApiFromKubeConfig,
  SimulatedSource,
  type DeviceStatusOutcome,
  type DraDriverOptions,
  type DraKubeApi,
} from '../../src/index.js';
import { allocatedClaim, FakeApiServer } from './fake-api-server.js';
import { TestDraKubelet } from './test-dra-kubelet.js';

const DRIVER = 'gpu.plugboard.example';
const NODE = 'node-a';

interface Dirs {
  plugins: string;
  registry: string;
  cdi: string;
}

async function makeDirs(): Promise<Dirs> {
  const root = await mkdtemp(join(tmpdir(), 'pb-dra-'));
  return { plugins: join(root, 'plugins'), registry: join(root, 'plugins_registry'), cdi: join(root, 'cdi') };
}

function claimRef(claim: { metadata: { namespace: string; name: string; uid: string } }): drav1.Claim {
  return { namespace: claim.metadata.namespace, name: claim.metadata.name, uid: claim.metadata.uid };
}

/** fs.watch with every inotify instance of the user taken (fs.inotify.max_user_instances). */
const noInotify = (): never => {
  throw Object.assign(new Error('EMFILE: too many open files, watch'), { code: 'EMFILE' });
};

describe('DRA driver without inotify', () => {
  it('registers with a kubelet that polls plugins_registry, and both say they poll', async () => {
    const api = await FakeApiServer.start();
    api.addNode(NODE);
    const dirs = await makeDirs();
    const kubelet = new TestDraKubelet(dirs.registry, { watch: noInotify });
    const driver = new DraDriver({
      driverName: DRIVER,
      nodeName: NODE,
      source: new SimulatedSource({ count: 2, idPrefix: 'gpu' }),
      kube: await kubeApiFromKubeConfig({ kubeconfig: api.kubeconfigPath }),
      pluginsDir: dirs.plugins,
      pluginsRegistryDir: dirs.registry,
      cdiDir: dirs.cdi,
      restartPollIntervalMs: 50,
      watch: noInotify,
    });
    try {
      await driver.start();
      kubelet.start();
      await kubelet.registered(DRIVER);
      assert.equal(kubelet.watchMode?.mode, 'poll');
      const { fileWatch } = driver.registration();
      assert.equal(fileWatch.mode, 'poll');
      assert.match(
        fileWatch.reason ?? '',
        /^inotify instances exhausted \(fs\.inotify\.max_user_instances\)/,
      );
      // A kubelet cleaning the plugin's directory is still noticed (by the poll): dra.sock comes back.
      const restored = once(driver, 'socket-restored');
      await unlink(driver.socketPath);
      await restored;
      assert.ok((await stat(driver.socketPath)).isSocket());
    } finally {
      kubelet.stop();
      await driver.stop();
      await api.stop();
      await rm(join(dirs.plugins, '..'), { recursive: true, force: true });
    }
  });
});

describe('DRA driver: registration and claim preparation', () => {
  let api: FakeApiServer;
  let kube: DraKubeApi;
  let dirs: Dirs;
  let kubelet: TestDraKubelet;
  let driver: DraDriver;

  async function startDriver(options: Partial<DraDriverOptions> = {}): Promise<DraDriver> {
    const d = new DraDriver({
      driverName: DRIVER,
      nodeName: NODE,
      source: new SimulatedSource({ count: 4, numaNodes: [0, 1], idPrefix: 'gpu' }),
      kube,
      pluginsDir: dirs.plugins,
      pluginsRegistryDir: dirs.registry,
      cdiDir: dirs.cdi,
      cdi: { class: 'gpu' },
      restartPollIntervalMs: 50,
      ...options,
    });
    await d.start();
    return d;
  }

  before(async () => {
    api = await FakeApiServer.start();
    api.addNode(NODE);
    kube = await kubeApiFromKubeConfig({ kubeconfig: api.kubeconfigPath });
  });

  after(async () => {
    await api.stop();
  });

  beforeEach(async () => {
    dirs = await makeDirs();
    driver = await startDriver();
    kubelet = new TestDraKubelet(dirs.registry);
    kubelet.start();
    await kubelet.registered(DRIVER);
  });

  afterEach(async () => {
    kubelet.stop();
    await driver.stop();
    await rm(join(dirs.plugins, '..'), { recursive: true, force: true });
  });

  it('registers through the plugin watcher with the DRA type, its endpoint and every service it serves', () => {
    const conn = kubelet.plugin(DRIVER);
    assert.deepEqual(conn.info, {
      type: 'DRAPlugin',
      name: DRIVER,
      endpoint: join(dirs.plugins, DRIVER, 'dra.sock'),
      supportedVersions: [
        'v1.DRAPlugin',
        'v1beta1.DRAPlugin',
        'v1.DRAResourceHealth',
        'v1alpha1.DRAResourceHealth',
      ],
    });
    assert.equal(driver.registrationSocketPath, join(dirs.registry, `${DRIVER}-reg.sock`));
    // NotifyRegistrationStatus has been answered before `registered` fired on the kubelet side.
    const state = driver.registration();
    assert.equal(state.phase, 'registered');
    assert.equal(state.infoCalls, 1);
    assert.equal(conn.healthService, 'v1.DRAResourceHealth');
    // Serve first: dra.sock was there when the kubelet found the registration socket.
    assert.equal(conn.endpointExistedAtInfo, true);
  });

  it('prepares a claim: reads it from the API server, writes a per-claim CDI spec, records it, answers vendor/class=name IDs', async () => {
    const claim = allocatedClaim({
      name: 'train',
      node: NODE,
      results: [
        { driver: DRIVER, pool: NODE, device: 'gpu-1', request: 'gpus' },
        { driver: DRIVER, pool: NODE, device: 'gpu-2', request: 'gpus/large' },
        { driver: 'nic.example.com', pool: NODE, device: 'vf-0', request: 'nic' },
      ],
    });
    api.putClaim(claim);
    const uid = claim.metadata.uid;
    const res = await kubelet.prepare(DRIVER, [claimRef(claim)]);
    assert.deepEqual(res.claims[uid], {
      error: '',
      devices: [
        {
          requestNames: ['gpus'],
          poolName: NODE,
          deviceName: 'gpu-1',
          cdiDeviceIds: [`k8s.${DRIVER}/gpu=${uid}-gpu-1`],
          shareId: undefined,
        },
        {
          requestNames: ['gpus'],
          poolName: NODE,
          deviceName: 'gpu-2',
          cdiDeviceIds: [`k8s.${DRIVER}/gpu=${uid}-gpu-2`],
          shareId: undefined,
        },
      ],
    });
    const spec = JSON.parse(await readFile(join(dirs.cdi, `k8s.${DRIVER}-gpu_${uid}.json`), 'utf8')) as {
      cdiVersion: string;
      kind: string;
      devices: { name: string; containerEdits: { env: string[] } }[];
    };
    assert.equal(spec.kind, `k8s.${DRIVER}/gpu`);
    assert.equal(spec.cdiVersion, '0.6.0');
    assert.deepEqual(
      spec.devices.map((d) => [d.name, d.containerEdits.env]),
      [
        [`${uid}-gpu-1`, ['PLUGBOARD_DRA_DEVICE_GPU_1=gpu-1']],
        [`${uid}-gpu-2`, ['PLUGBOARD_DRA_DEVICE_GPU_2=gpu-2']],
      ],
    );
    const checkpoint = JSON.parse(await readFile(driver.checkpointPath, 'utf8')) as {
      preparedClaims: Record<string, { namespace: string; name: string; devices: { deviceName: string }[] }>;
    };
    assert.deepEqual(Object.keys(checkpoint.preparedClaims), [uid]);
    assert.deepEqual(
      checkpoint.preparedClaims[uid]!.devices.map((d) => d.deviceName),
      ['gpu-1', 'gpu-2'],
    );
    assert.equal((await stat(driver.checkpointPath)).mode & 0o777, 0o600);
  });

  it('is idempotent: a second prepare answers the same from the checkpoint, unprepare twice succeeds', async () => {
    const claim = allocatedClaim({
      name: 'c1',
      node: NODE,
      results: [{ driver: DRIVER, pool: NODE, device: 'gpu-0' }],
    });
    api.putClaim(claim);
    const uid = claim.metadata.uid;
    const first = await kubelet.prepare(DRIVER, [claimRef(claim)]);
    const reads = api.count('GET', '/apis/resource.k8s.io/v1/namespaces/');
    const second = await kubelet.prepare(DRIVER, [claimRef(claim), claimRef(claim)]);
    assert.deepEqual(second, first);
    assert.equal(api.count('GET', '/apis/resource.k8s.io/v1/namespaces/'), reads, 'no second API read');
    assert.equal(driver.preparedClaims().length, 1);

    const specPath = join(dirs.cdi, `k8s.${DRIVER}-gpu_${uid}.json`);
    for (let i = 0; i < 2; i++) {
      const res = await kubelet.unprepare(DRIVER, [claimRef(claim)]);
      assert.deepEqual(res.claims, { [uid]: { error: '' } });
    }
    await assert.rejects(stat(specPath), { code: 'ENOENT' });
    assert.deepEqual(driver.preparedClaims(), []);
    const checkpoint = JSON.parse(await readFile(driver.checkpointPath, 'utf8')) as {
      preparedClaims: object;
    };
    assert.deepEqual(checkpoint.preparedClaims, {});
    // Never prepared at all: also fine.
    const never = await kubelet.unprepare(DRIVER, [{ namespace: 'default', name: 'ghost', uid: 'u-ghost' }]);
    assert.deepEqual(never.claims, { 'u-ghost': { error: '' } });
  });

  it('records every claim of concurrent calls in the checkpoint (calls in flight share checkpoint writes)', async () => {
    const claims = [0, 1, 2, 3].map((i) =>
      allocatedClaim({
        name: `c${i}`,
        node: NODE,
        results: [{ driver: DRIVER, pool: NODE, device: `gpu-${i}` }],
      }),
    );
    for (const c of claims) api.putClaim(c);
    const prepared = await Promise.all(claims.map((c) => kubelet.prepare(DRIVER, [claimRef(c)])));
    assert.deepEqual(
      prepared.map((r, i) => r.claims[claims[i]!.metadata.uid]?.error),
      ['', '', '', ''],
    );
    const recorded = JSON.parse(await readFile(driver.checkpointPath, 'utf8')) as { preparedClaims: object };
    assert.deepEqual(Object.keys(recorded.preparedClaims).sort(), claims.map((c) => c.metadata.uid).sort());
    await Promise.all(claims.map((c) => kubelet.unprepare(DRIVER, [claimRef(c)])));
    const after = JSON.parse(await readFile(driver.checkpointPath, 'utf8')) as { preparedClaims: object };
    assert.deepEqual(after.preparedClaims, {});
  });

  it('answers each bad claim with its own error and still prepares the good one in the same call', async () => {
    const good = allocatedClaim({
      name: 'good',
      node: NODE,
      results: [{ driver: DRIVER, pool: NODE, device: 'gpu-3' }],
    });
    const otherNode = allocatedClaim({
      name: 'elsewhere',
      node: 'node-b',
      results: [{ driver: DRIVER, pool: 'node-b', device: 'gpu-0' }],
    });
    const otherPool = allocatedClaim({
      name: 'other-pool',
      node: NODE,
      results: [{ driver: DRIVER, pool: 'node-b', device: 'gpu-0' }],
    });
    const unknown = allocatedClaim({
      name: 'unknown',
      node: NODE,
      results: [
        { driver: DRIVER, pool: NODE, device: 'gpu-9' },
        { driver: DRIVER, pool: NODE, device: 'tpu-0' },
      ],
    });
    const replaced = allocatedClaim({
      name: 'replaced',
      node: NODE,
      results: [{ driver: DRIVER, pool: NODE, device: 'gpu-0' }],
    });
    const notAllocated = { metadata: { namespace: 'default', name: 'pending', uid: 'u-pending' } };
    for (const c of [good, otherNode, otherPool, unknown, replaced, notAllocated]) api.putClaim(c);
    const res = await kubelet.prepare(DRIVER, [
      claimRef(good),
      claimRef(otherNode),
      claimRef(otherPool),
      claimRef(unknown),
      { ...claimRef(replaced), uid: 'u-old' },
      claimRef(notAllocated),
      { namespace: 'default', name: 'missing', uid: 'u-missing' },
      { namespace: '', name: 'no-namespace', uid: 'u-bad' },
    ]);
    const errors = Object.fromEntries(Object.entries(res.claims).map(([uid, r]) => [uid, r.error]));
    assert.deepEqual(errors, {
      [good.metadata.uid]: '',
      [otherNode.metadata.uid]:
        'claim default/elsewhere is allocated to node node-b, not to this node (node-a)',
      [otherPool.metadata.uid]:
        `claim default/other-pool is allocated on another node: node-b/gpu-0 is not in this node's pool "node-a"`,
      [unknown.metadata.uid]: `unknown devices gpu-9, tpu-0 in pool "node-a" of driver ${DRIVER}`,
      'u-old': `claim default/replaced got replaced: the API server has UID ${replaced.metadata.uid}, the kubelet asked for u-old`,
      'u-pending': 'claim default/pending is not allocated',
      'u-missing': 'claim default/missing not found',
      'u-bad': 'claim /no-namespace: namespace required',
    });
    assert.equal(res.claims[good.metadata.uid]!.devices[0]!.deviceName, 'gpu-3');
    assert.deepEqual(
      driver.preparedClaims().map((c) => c.name),
      ['good'],
    );
    // Nothing was written for the refused claims.
    assert.deepEqual(await readdir(dirs.cdi), [`k8s.${DRIVER}-gpu_${good.metadata.uid}.json`]);
  });

  it('refuses a device prepared for another claim, and a device that is unhealthy', async () => {
    const first = allocatedClaim({
      name: 'first',
      node: NODE,
      results: [{ driver: DRIVER, pool: NODE, device: 'gpu-0' }],
    });
    const second = allocatedClaim({
      name: 'second',
      node: NODE,
      results: [{ driver: DRIVER, pool: NODE, device: 'gpu-0' }],
    });
    const faulty = allocatedClaim({
      name: 'faulty',
      node: NODE,
      results: [{ driver: DRIVER, pool: NODE, device: 'gpu-1' }],
    });
    const admin = allocatedClaim({
      name: 'admin',
      node: NODE,
      results: [{ driver: DRIVER, pool: NODE, device: 'gpu-1', adminAccess: true }],
    });
    for (const c of [first, second, faulty, admin]) api.putClaim(c);
    driver.injectFault('gpu-1', 'simulated: ECC errors');
    const res = await kubelet.prepare(DRIVER, [
      claimRef(first),
      claimRef(second),
      claimRef(faulty),
      claimRef(admin),
    ]);
    assert.equal(res.claims[first.metadata.uid]!.error, '');
    assert.equal(
      res.claims[second.metadata.uid]!.error,
      `device gpu-0 is already prepared for claim default/first (UID ${first.metadata.uid})`,
    );
    assert.equal(res.claims[faulty.metadata.uid]!.error, 'device gpu-1 is unhealthy (simulated: ECC errors)');
    assert.equal(res.claims[admin.metadata.uid]!.error, '', 'admin access may use an unhealthy device');
  });

  it('answers a claim the API server cannot return with an error for that claim only', async () => {
    const a = allocatedClaim({
      name: 'a',
      node: NODE,
      results: [{ driver: DRIVER, pool: NODE, device: 'gpu-0' }],
    });
    const b = allocatedClaim({
      name: 'b',
      node: NODE,
      results: [{ driver: DRIVER, pool: NODE, device: 'gpu-1' }],
    });
    api.putClaim(a);
    api.putClaim(b);
    api.failNext(1, 500, (r) => r.path.endsWith('/resourceclaims/a'));
    const res = await kubelet.prepare(DRIVER, [claimRef(a), claimRef(b)]);
    assert.match(
      res.claims[a.metadata.uid]!.error,
      /^retrieve claim default\/a: read ResourceClaim default\/a: HTTP 500: injected failure$/,
    );
    assert.equal(res.claims[b.metadata.uid]!.error, '');
    // The kubelet retries; now it works.
    const retry = await kubelet.prepare(DRIVER, [claimRef(a)]);
    assert.equal(retry.claims[a.metadata.uid]!.error, '');
  });

  it('with deviceStatus, a status write the API server refuses leaves the claim prepared, logged and emitted', async () => {
    await driver.stop();
    const registeredAgain = kubelet.registered(DRIVER, { current: false });
    driver = await startDriver({ deviceStatus: true });
    await registeredAgain;
    const events: DeviceStatusOutcome[] = [];
    driver.on('device-status', (e) => events.push(...e.claims));
    const claim = allocatedClaim({
      name: 'reported',
      node: NODE,
      results: [{ driver: DRIVER, pool: NODE, device: 'gpu-3' }],
    });
    api.putClaim(claim);
    // This fake API server serves no status subresource: the write fails with its 404.
    const res = await kubelet.prepare(DRIVER, [claimRef(claim)]);
    assert.equal(res.claims[claim.metadata.uid]!.error, '');
    assert.deepEqual(
      driver.preparedClaims().map((c) => c.uid),
      [claim.metadata.uid],
    );
    assert.equal(events.length, 1);
    assert.deepEqual(
      { ...events[0], error: undefined },
      {
        uid: claim.metadata.uid,
        namespace: 'default',
        name: 'reported',
        written: 0,
        error: undefined,
      },
    );
    assert.match(
      events[0]!.error ?? '',
      /^patch ResourceClaim default\/reported status: HTTP 404: the fake API server does not serve PATCH /,
    );
  });

  it('keeps serving after a malformed request', async () => {
    // Bytes that are not a NodePrepareResourcesRequest (field 1 says 100 bytes follow; 1 does).
    const Raw = makeGenericClientConstructor(
      {
        prepare: {
          path: drav1.DRAPluginService.nodePrepareResources.path,
          requestStream: false,
          responseStream: false,
          requestSerialize: (b: Buffer) => b,
          requestDeserialize: (b: Buffer) => b,
          responseSerialize: (b: Buffer) => b,
          responseDeserialize: (b: Buffer) => b,
        },
      },
      'Raw',
    );
    const raw = new Raw(`unix://${driver.socketPath}`, credentials.createInsecure()) as unknown as {
      prepare(req: Buffer, cb: (err: ServiceError | null) => void): void;
      close(): void;
    };
    const err = await new Promise<ServiceError | null>((resolve) =>
      raw.prepare(Buffer.from([0x0a, 0x64, 0x01]), resolve),
    );
    raw.close();
    assert.equal(err?.code, status.INTERNAL);
    const claim = allocatedClaim({
      name: 'after',
      node: NODE,
      results: [{ driver: DRIVER, pool: NODE, device: 'gpu-0' }],
    });
    api.putClaim(claim);
    const res = await kubelet.prepare(DRIVER, [claimRef(claim)]);
    assert.equal(res.claims[claim.metadata.uid]!.error, '');
    // An empty request is a valid no-op.
    assert.deepEqual(await kubelet.prepare(DRIVER, []), { claims: {} });
  });

  it('survives its own restart with prepared claims: the checkpoint answers prepare and unprepare', async () => {
    const claim = allocatedClaim({
      name: 'long',
      node: NODE,
      results: [{ driver: DRIVER, pool: NODE, device: 'gpu-2' }],
    });
    api.putClaim(claim);
    const before = await kubelet.prepare(DRIVER, [claimRef(claim)]);
    await driver.stop();
    // Both sockets are gone after a stop; the kubelet deregisters the driver.
    await assert.rejects(stat(driver.socketPath), { code: 'ENOENT' });
    await assert.rejects(stat(driver.registrationSocketPath), { code: 'ENOENT' });
    // The claim is deleted from the API server while the driver is down (its pod ended).
    api.claims.delete('default/long');
    const registeredAgain = kubelet.registered(DRIVER, { current: false });
    driver = await startDriver();
    await registeredAgain;
    assert.deepEqual(
      driver.preparedClaims().map((c) => c.uid),
      [claim.metadata.uid],
    );
    // The kubelet, after its own restart, prepares running pods' claims again.
    assert.deepEqual(await kubelet.prepare(DRIVER, [claimRef(claim)]), before);
    const res = await kubelet.unprepare(DRIVER, [claimRef(claim)]);
    assert.deepEqual(res.claims, { [claim.metadata.uid]: { error: '' } });
    await assert.rejects(stat(join(dirs.cdi, `k8s.${DRIVER}-gpu_${claim.metadata.uid}.json`)), {
      code: 'ENOENT',
    });
  });

  it('re-creates a deleted registration socket and is registered again; re-serves a deleted dra.sock', async () => {
    const again = kubelet.registered(DRIVER, { current: false });
    const deregistered = once(kubelet, 'deregistered');
    await unlink(driver.registrationSocketPath);
    await deregistered;
    await again;
    assert.equal(driver.registration().phase, 'registered');
    assert.equal(driver.registration().infoCalls, 2);
    // The new socket appeared already listening: the kubelet's first attempt succeeded.
    assert.deepEqual(kubelet.rejections, []);

    const restored = once(driver, 'socket-restored');
    await unlink(driver.socketPath);
    const [event] = (await restored) as [{ socket: string }];
    assert.equal(event.socket, driver.socketPath);
    const claim = allocatedClaim({
      name: 'x',
      node: NODE,
      results: [{ driver: DRIVER, pool: NODE, device: 'gpu-0' }],
    });
    api.putClaim(claim);
    // The kubelet keeps the endpoint path and dials it again.
    const res = await kubelet.prepare(DRIVER, [claimRef(claim)]);
    assert.equal(res.claims[claim.metadata.uid]!.error, '');
  });

  it('is registered again by a restarted kubelet, and records a refusal with its reason', async () => {
    const again = kubelet.registered(DRIVER, { current: false });
    await kubelet.restart();
    await again;
    assert.equal(driver.registration().infoCalls, 2);
    assert.equal(driver.registration().phase, 'registered');

    kubelet.rejectWith = 'driver gpu.plugboard.example is already registered by another pod';
    const refused = once(driver, 'registration-error');
    await kubelet.restart();
    const [event] = (await refused) as [{ error: string }];
    assert.equal(event.error, 'driver gpu.plugboard.example is already registered by another pod');
    assert.deepEqual(
      { phase: driver.registration().phase, error: driver.registration().error },
      { phase: 'failed', error: 'driver gpu.plugboard.example is already registered by another pod' },
    );
  });

  it('refuses to start on a corrupt checkpoint, naming the file and leaving it as it is', async () => {
    const path = driver.checkpointPath;
    kubelet.stop();
    await driver.stop();
    await writeFile(
      path,
      '{"kind":"PlugboardDRACheckpoint","version":1,"driver":"gpu.plugboard.example","checksum":"0","preparedClaims":{"u":{}}}',
    );
    await assert.rejects(startDriver(), (err: Error) => {
      assert.match(
        err.message,
        new RegExp(`^checkpoint ${path} is corrupt \\(checksum mismatch\\); move it away`),
      );
      return true;
    });
    assert.match(await readFile(path, 'utf8'), /"checksum":"0"/);
    // afterEach stops `driver` (already stopped: a no-op) and the kubelet.
  });
});
