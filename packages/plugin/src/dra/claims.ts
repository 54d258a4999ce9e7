// Which of a ResourceClaim's allocated devices this driver prepares, and why it refuses a claim:
// the checks NodePrepareResources makes after reading the claim from the API server (the kubelet
// sends only namespace, name and UID). Upstream's helper checks that the claim exists, has the
// UID the kubelet asked for and is allocated; this also checks that the allocation is on this
// node, names only devices this driver advertises, and does not use an unhealthy device the claim
// does not tolerate. Each problem is one line of the claim's error, so one bad claim never fails
// the others of the same call.
import { PluginError } from '../errors.js';
import type { PluginDevice } from '../types.js';
import type { DeviceRequestAllocationResult, DeviceToleration, ResourceClaim } from './api-types.js';

export interface ClaimRef {
  namespace: string;
  name: string;
  uid: string;
}

export interface ClaimCheck {
  driverName: string;
  poolName: string;
  nodeName: string;
  /** The advertised device behind a device name of the ResourceSlice. */
  deviceByName: (name: string) => PluginDevice | undefined;
  /**
   * Keys of the taints the driver puts on an unhealthy device (its driver-wide taint, a fault's
   * taint): a result that tolerates one of them may use the device.
   */
  taintKeys: (device: PluginDevice) => readonly string[];
}

export interface AllocatedDevice {
  result: DeviceRequestAllocationResult;
  device: PluginDevice;
}

export const claimLabel = (c: ClaimRef): string => `${c.namespace}/${c.name}`;

/** resourceclaim.BaseRequestRef: "request/subrequest" → "request". */
export function baseRequestName(request: string): string {
  const slash = request.indexOf('/');
  return slash < 0 ? request : request.slice(0, slash);
}

/** A claim identity the kubelet would never send (empty fields) as a problem text, or null. */
export function claimRefProblem(c: ClaimRef): string | null {
  const missing = (['namespace', 'uid', 'name'] as const).filter((k) => !c[k]);
  return missing.length ? `claim ${claimLabel(c)}: ${missing.join(', ')} required` : null;
}

/** The node names an allocation's node selector limits it to (matchFields metadata.name In), or null. */
function selectedNodes(allocation: ClaimAllocation): Set<string> | null {
  const terms = allocation.nodeSelector?.nodeSelectorTerms ?? [];
  if (terms.length === 0) return null;
  const nodes = new Set<string>();
  for (const term of terms) {
    const byName = (term.matchFields ?? []).filter((f) => f.key === 'metadata.name' && f.operator === 'In');
    // A term that does not pin node names may match any node.
    if (byName.length === 0) return null;
    for (const f of byName) for (const v of f.values ?? []) nodes.add(v);
  }
  return nodes;
}

function tolerates(tolerations: readonly DeviceToleration[] | undefined, key: string): boolean {
  return (tolerations ?? []).some(
    (t) =>
      (t.operator === 'Exists' && (t.key === undefined || t.key === '' || t.key === key)) || t.key === key,
  );
}

type ClaimAllocation = NonNullable<NonNullable<ResourceClaim['status']>['allocation']>;

/**
 * What upstream's helper checks of a claim it read for the kubelet's `ref` (getResourceClaims):
 * found, the UID asked for (not replaced), allocated. Returns the allocation; throws a PluginError
 * naming the problem.
 */
export function checkedAllocation(ref: ClaimRef, claim: ResourceClaim | null): ClaimAllocation {
  const label = claimLabel(ref);
  if (claim === null) throw new PluginError('not-found', `claim ${label} not found`);
  if (claim.metadata.uid !== ref.uid) {
    throw new PluginError(
      'invalid-argument',
      `claim ${label} got replaced: the API server has UID ${claim.metadata.uid}, the kubelet asked for ${ref.uid}`,
    );
  }
  const allocation = claim.status?.allocation;
  if (!allocation) throw new PluginError('invalid-argument', `claim ${label} is not allocated`);
  return allocation;
}

/**
 * The devices of `claim` (as read from the API server for the kubelet's `ref`) that this driver
 * prepares; throws a PluginError whose message names every problem.
 */
export function devicesToPrepare(
  ref: ClaimRef,
  claim: ResourceClaim | null,
  check: ClaimCheck,
): AllocatedDevice[] {
  const label = claimLabel(ref);
  const allocation = checkedAllocation(ref, claim);
  const nodes = selectedNodes(allocation);
  if (nodes !== null && !nodes.has(check.nodeName)) {
    throw new PluginError(
      'invalid-argument',
      `claim ${label} is allocated to node ${[...nodes].join(', ')}, not to this node (${check.nodeName})`,
    );
  }
  const ours = (allocation.devices?.results ?? []).filter((r) => r.driver === check.driverName);
  if (ours.length === 0) {
    throw new PluginError(
      'invalid-argument',
      `claim ${label} has no devices allocated from driver ${check.driverName}`,
    );
  }
  const problems: string[] = [];
  const elsewhere = ours.filter((r) => r.pool !== check.poolName);
  if (elsewhere.length > 0) {
    problems.push(
      `claim ${label} is allocated on another node: ${elsewhere.map((r) => `${r.pool}/${r.device}`).join(', ')} ` +
        `${elsewhere.length === 1 ? 'is' : 'are'} not in this node's pool "${check.poolName}"`,
    );
  }
  const devices: AllocatedDevice[] = [];
  const unknown: string[] = [];
  for (const result of ours) {
    if (result.pool !== check.poolName) continue;
    const device = check.deviceByName(result.device);
    if (!device) {
      unknown.push(result.device);
      continue;
    }
    if (
      device.health === 'Unhealthy' &&
      !result.adminAccess &&
      !check.taintKeys(device).some((key) => tolerates(result.tolerations, key))
    ) {
      problems.push(`device ${result.device} is unhealthy (${device.reason ?? 'no reason given'})`);
      continue;
    }
    devices.push({ result, device });
  }
  if (unknown.length > 0) {
    problems.push(
      `unknown device${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} in pool "${check.poolName}" of driver ${check.driverName}`,
    );
  }
  if (problems.length > 0) {
    throw new PluginError(unknown.length > 0 ? 'not-found' : 'invalid-argument', problems.join('; '));
  }
  return devices;
}
