import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deviceplugin, podresources, pluginregistration, DEVICE_PLUGIN_API_VERSION } from './index.js';

const pkgDir = join(dirname(fileURLToPath(import.meta.url)), '..');

function listFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    return statSync(full).isDirectory() ? listFiles(full) : [full];
  });
}

test('committed generated code matches a fresh `npm run generate`', () => {
  const out = mkdtempSync(join(tmpdir(), 'plugboard-gen-check-'));
  try {
    execFileSync(process.execPath, [join(pkgDir, 'scripts/generate.mjs'), out], { stdio: 'pipe' });
    const committed = join(pkgDir, 'src/gen');
    const fresh = listFiles(out)
      .map((f) => relative(out, f))
      .sort();
    assert.deepEqual(
      listFiles(committed)
        .map((f) => relative(committed, f))
        .sort(),
      fresh,
    );
    for (const file of fresh) {
      assert.equal(
        readFileSync(join(committed, file), 'utf8'),
        readFileSync(join(out, file), 'utf8'),
        `src/gen/${file} is stale: run npm run generate -w @plugboard/proto`,
      );
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

test('method paths are the upstream ones', () => {
  assert.equal(deviceplugin.RegistrationService.register.path, '/v1beta1.Registration/Register');
  assert.equal(deviceplugin.DevicePluginService.listAndWatch.path, '/v1beta1.DevicePlugin/ListAndWatch');
  assert.equal(
    deviceplugin.DevicePluginService.getPreferredAllocation.path,
    '/v1beta1.DevicePlugin/GetPreferredAllocation',
  );
  assert.equal(
    deviceplugin.DevicePluginService.preStartContainer.path,
    '/v1beta1.DevicePlugin/PreStartContainer',
  );
  assert.equal(podresources.PodResourcesListerService.list.path, '/v1.PodResourcesLister/List');
  assert.equal(
    podresources.PodResourcesListerService.getAllocatableResources.path,
    '/v1.PodResourcesLister/GetAllocatableResources',
  );
  assert.equal(podresources.PodResourcesListerService.get.path, '/v1.PodResourcesLister/Get');
  assert.equal(
    pluginregistration.RegistrationService.getInfo.path,
    '/pluginregistration.Registration/GetInfo',
  );
  assert.equal(DEVICE_PLUGIN_API_VERSION, 'v1beta1');
});

test('field numbers and wire types match upstream (golden bytes)', () => {
  // RegisterRequest{version=1,endpoint=2,resource_name=3,options=4{pre_start_required=1,get_preferred_allocation_available=2}}
  const reg = deviceplugin.RegisterRequest.encode({
    version: 'v1beta1',
    endpoint: 'a.sock',
    resourceName: 'x.io/y',
    options: { preStartRequired: true, getPreferredAllocationAvailable: true },
  }).finish();
  assert.equal(
    Buffer.from(reg).toString('hex'),
    '0a0776316265746131' + '1206612e736f636b' + '1a06782e696f2f79' + '2204' + '0801' + '1001',
  );
  // Device{ID=1,health=2,topology=3{nodes=1{ID=1 (int64)}}}
  const dev = deviceplugin.Device.encode({
    ID: 'd',
    health: 'Healthy',
    topology: { nodes: [{ ID: 1 }] },
  }).finish();
  assert.equal(Buffer.from(dev).toString('hex'), '0a0164' + '12074865616c746879' + '1a04' + '0a02' + '0801');
  // ContainerPreferredAllocationRequest{available=1,must_include=2,allocation_size=3 (int32)}
  const pref = deviceplugin.ContainerPreferredAllocationRequest.encode({
    availableDeviceIDs: ['a'],
    mustIncludeDeviceIDs: ['b'],
    allocationSize: 2,
  }).finish();
  assert.equal(Buffer.from(pref).toString('hex'), '0a0161' + '120162' + '1802');
  // ContainerAllocateResponse{envs=1 map, cdi_devices=5}
  const alloc = deviceplugin.ContainerAllocateResponse.encode({
    envs: { K: 'V' },
    mounts: [],
    devices: [],
    annotations: {},
    cdiDevices: [{ name: 'v/c=n' }],
  }).finish();
  assert.equal(Buffer.from(alloc).toString('hex'), '0a06' + '0a014b' + '120156' + '2a07' + '0a05762f633d6e');
  // ContainerResources{name=1,cpu_ids=3 packed int64, dynamic_resources=5{claim_name=2}}
  const cr = podresources.ContainerResources.encode({
    name: 'c',
    devices: [],
    cpuIds: [1, 2],
    memory: [],
    dynamicResources: [{ claimName: 'k', claimNamespace: '', claimResources: [] }],
  }).finish();
  assert.equal(Buffer.from(cr).toString('hex'), '0a0163' + '1a020102' + '2a03' + '12016b');
  // PodResources{name=1, cpu_ids=4 packed int64 (pod-level, KEP-5526), memory=5}
  const pod = podresources.PodResources.encode({
    name: 'p',
    namespace: '',
    containers: [],
    cpuIds: [3],
    memory: [{ memoryType: 'm', size: 1, topology: undefined }],
  }).finish();
  assert.equal(Buffer.from(pod).toString('hex'), '0a0170' + '220103' + '2a05' + '0a016d' + '1001');
  // ClaimResource{cdi_devices=1, driver_name=2, pool_name=3, device_name=4, optional share_id=5}
  const claim = podresources.ClaimResource.encode({
    cdiDevices: [],
    driverName: 'd',
    poolName: 'p',
    deviceName: 'n',
    shareId: 's',
  }).finish();
  assert.equal(Buffer.from(claim).toString('hex'), '120164' + '1a0170' + '22016e' + '2a0173');
});
