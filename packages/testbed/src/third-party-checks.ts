// Assertions both third-party suites (third-party.int.test.ts on kubelet-sim, third-party.real.test.ts
// on a real kubelet) make of dra-example-driver's claims, in one place.
import assert from 'node:assert/strict';
import type { PodResourcesClient } from './pod-resources.js';

/** dra-example-driver's CDI device names for `device` of the claim `claimUid` (common first). */
export function draExampleCdiNames(claimUid: string, device: string): string[] {
  return ['k8s.gpu.example.com/gpu=common', `k8s.gpu.example.com/gpu=${claimUid}-${device}`];
}

/**
 * PodResources Get of `namespace/pod` lists, for its first container, the claim `claimName` holding
 * exactly dra-example-driver's `device` in the node's pool, with the driver's CDI names.
 */
export async function assertDraExampleClaimReported(
  podResources: PodResourcesClient,
  at: { namespace: string; pod: string; nodeName: string },
  claim: { name: string; uid: string; device: string },
): Promise<void> {
  const got = await podResources.get(at.namespace, at.pod);
  const dynamic = got.podResources?.containers[0]?.dynamicResources ?? [];
  assert.equal(dynamic[0]?.claimName, claim.name);
  const held = dynamic[0]?.claimResources ?? [];
  assert.deepEqual(
    held.map((r) => `${r.driverName}/${r.poolName}/${r.deviceName}`),
    [`gpu.example.com/${at.nodeName}/${claim.device}`],
  );
  assert.deepEqual(
    held[0]?.cdiDevices.map((d) => d.name),
    draExampleCdiNames(claim.uid, claim.device),
  );
}
