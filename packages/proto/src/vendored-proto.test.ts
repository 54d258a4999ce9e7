// The kubelet's protos (device plugin, PodResources, plugin registration, DRA, DRA health) are
// vendored verbatim from kubernetes/kubelet: their bytes are pinned here (with the upstream commit
// they came from), and the generated stubs keep upstream's method paths and wire format.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  DRA_PLUGIN_SERVICE_V1,
  DRA_PLUGIN_SERVICE_V1BETA1,
  DRA_RESOURCE_HEALTH_SERVICE_V1,
  DRA_RESOURCE_HEALTH_SERVICE_V1ALPHA1,
  drahealthv1,
  drahealthv1alpha1,
  drav1,
  drav1beta1,
} from './index.js';

const pkgDir = join(dirname(fileURLToPath(import.meta.url)), '..');

/** kubernetes/kubelet at 63b3249724f7d89a8aa48f9acb3811f193c9aa68 (2026-07-23), pkg/apis/<path>. */
const VENDORED: Record<string, string> = {
  'v1beta1/api.proto': 'b780bfeac99c93c231dc165ce417f4da88481eececa0c65eeb90f5f2e9b5b65b', // deviceplugin/v1beta1
  'podresources/v1/api.proto': 'b261f07b951c6ae807c90a3137475733a105c085d3fee62ac62199e0d986c823',
  'pluginregistration/v1/api.proto': '7a67a0000a1a167c155286834bc9ccb489f8bcdb394e006daba270189c272afa',
  'dra/v1/api.proto': 'b3066ad7f6abcfd0003c47b06ceb801d76997d78d6be505597478d3905b9cc57',
  'dra/v1beta1/api.proto': '7900b11793ad897d0375d67b3bbae675869b574e21dfb1bf5334cc1556138c42',
  'dra-health/v1/api.proto': 'a088e44962719a5184f183ef2fff4b017585434ff4f0cbad13ef8f8c782bc004',
  'dra-health/v1alpha1/api.proto': '75f8c523ec546ceb83bd63f3b7a38c23d979494e7015db12d146e2f39dd4528e',
};

test('kubelet protos are byte-for-byte the upstream files', () => {
  for (const [path, sha256] of Object.entries(VENDORED)) {
    const bytes = readFileSync(join(pkgDir, 'proto', path));
    assert.equal(createHash('sha256').update(bytes).digest('hex'), sha256, `proto/${path} was edited`);
  }
});

test('DRA method paths are the upstream ones and match the registration service names', () => {
  assert.equal(
    drav1.DRAPluginService.nodePrepareResources.path,
    '/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources',
  );
  assert.equal(
    drav1.DRAPluginService.nodeUnprepareResources.path,
    '/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources',
  );
  assert.equal(
    drav1beta1.DRAPluginService.nodePrepareResources.path,
    '/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/NodePrepareResources',
  );
  assert.equal(
    drahealthv1.DRAResourceHealthService.nodeWatchResources.path,
    `/${DRA_RESOURCE_HEALTH_SERVICE_V1}/NodeWatchResources`,
  );
  assert.equal(
    drahealthv1alpha1.DRAResourceHealthService.nodeWatchResources.path,
    `/${DRA_RESOURCE_HEALTH_SERVICE_V1ALPHA1}/NodeWatchResources`,
  );
  assert.equal(drahealthv1.DRAResourceHealthService.nodeWatchResources.responseStream, true);
  // The DRAPlugin names in supported_versions are "<version>.DRAPlugin", not the proto service name.
  assert.equal(DRA_PLUGIN_SERVICE_V1, 'v1.DRAPlugin');
  assert.equal(DRA_PLUGIN_SERVICE_V1BETA1, 'v1beta1.DRAPlugin');
});

test('DRA field numbers and wire types match upstream (golden bytes)', () => {
  // Device{request_names=1, pool_name=2, device_name=3, cdi_device_ids=4, optional share_id=5}
  const device = drav1.Device.encode({
    requestNames: ['r'],
    poolName: 'p',
    deviceName: 'd',
    cdiDeviceIds: ['v/c=n'],
    shareId: 's',
  }).finish();
  assert.equal(
    Buffer.from(device).toString('hex'),
    '0a0172' + '120170' + '1a0164' + '2205762f633d6e' + '2a0173',
  );
  // share_id is proto3 `optional`: unset is absent from the wire, "" is present.
  assert.equal(
    Buffer.from(
      drav1.Device.encode({ requestNames: [], poolName: '', deviceName: '', cdiDeviceIds: [] }).finish(),
    ).toString('hex'),
    '',
  );
  // NodePrepareResourcesResponse{claims=1 map<string, {devices=1, error=2}>}
  const prepared = drav1.NodePrepareResourcesResponse.encode({
    claims: { u: { devices: [], error: 'e' } },
  }).finish();
  assert.equal(Buffer.from(prepared).toString('hex'), '0a08' + '0a0175' + '1203' + '120165');
  // Claim{namespace=1, uid=2, name=3}; v1beta1 is the same message on the wire.
  const claim = { namespace: 'n', uid: 'u', name: 'c' };
  const claimHex = '0a016e' + '120175' + '1a0163';
  assert.equal(Buffer.from(drav1.Claim.encode(claim).finish()).toString('hex'), claimHex);
  assert.equal(Buffer.from(drav1beta1.Claim.encode(claim).finish()).toString('hex'), claimHex);
  // DeviceHealth{device=1{pool_name=1, device_name=2}, health=2 enum, last_updated_time=3 int64,
  // health_check_timeout_seconds=4 int64, message=5}
  const health = drahealthv1.DeviceHealth.encode({
    device: { poolName: 'p', deviceName: 'd' },
    health: drahealthv1.HealthStatus.UNHEALTHY,
    lastUpdatedTime: 1,
    healthCheckTimeoutSeconds: 2,
    message: 'm',
  }).finish();
  const healthHex = '0a06' + '0a0170' + '120164' + '1002' + '1801' + '2002' + '2a016d';
  assert.equal(Buffer.from(health).toString('hex'), healthHex);
  assert.equal(
    Buffer.from(
      drahealthv1alpha1.DeviceHealth.encode({
        device: { poolName: 'p', deviceName: 'd' },
        health: drahealthv1alpha1.HealthStatus.UNHEALTHY,
        lastUpdatedTime: 1,
        healthCheckTimeoutSeconds: 2,
        message: 'm',
      }).finish(),
    ).toString('hex'),
    healthHex,
  );
});
