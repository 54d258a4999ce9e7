// The Topology Manager (pkg/kubelet/cm/topologymanager, release-1.33): its policies and scopes,
// the hint a provider gives (a NUMA affinity plus `preferred`) and the hint generation the three
// hint providers share (the device manager, the CPU Manager, the Memory Manager). The folder
// follows upstream's files: bitmask.ts (bitmask/), policy.ts (policy.go and the policy_*.go
// merges), scope.ts (scope.go, scope_container.go, scope_pod.go: the admit handler). Pure: the
// admit handler works on whatever providers it is given (kubelet-sim's live managers, or the
// gateway's copies rebuilt from PodResources for a prediction).

import { allMasks, countOf, type Mask } from './bitmask.js';

export type TopologyManagerPolicy = 'none' | 'best-effort' | 'restricted' | 'single-numa-node';
export type TopologyManagerScope = 'container' | 'pod';
export const TOPOLOGY_MANAGER_POLICIES: readonly TopologyManagerPolicy[] = [
  'none',
  'best-effort',
  'restricted',
  'single-numa-node',
];
export const TOPOLOGY_MANAGER_SCOPES: readonly TopologyManagerScope[] = ['container', 'pod'];
/** The kubelet refuses to run a Topology Manager policy on machines with more NUMA nodes. */
export const MAX_ALIGNABLE_NUMA_NODES = 8;

export interface TopologyHint {
  /** null: any NUMA node will do (no preference). */
  mask: Mask | null;
  preferred: boolean;
}

export type HintProvider = 'devices' | 'cpu' | 'memory';

/** One provider's answer for one resource: null = no preference, [] = cannot be satisfied. */
export interface ResourceHints {
  provider: HintProvider;
  resource: string;
  hints: TopologyHint[] | null;
}

/**
 * The hint generation every provider shares (generateDeviceTopologyHints,
 * generateCPUTopologyHints, the Memory Manager's calculateHints): a mask is a hint when what is
 * available in it (reusable included) covers the request; `availableIn` returns null to rule a
 * mask out (reusable resources outside it). Hints whose width equals the narrowest mask whose
 * *total* capacity could hold the request are preferred.
 */
export function generateHints(
  numaIds: readonly number[],
  request: number,
  capacityIn: (mask: Mask) => number,
  availableIn: (mask: Mask) => number | null,
): TopologyHint[] {
  let minAffinitySize = numaIds.length;
  const hints: TopologyHint[] = [];
  for (const mask of allMasks(numaIds)) {
    if (capacityIn(mask) >= request && countOf(mask) < minAffinitySize) minAffinitySize = countOf(mask);
    const available = availableIn(mask);
    if (available === null || available < request) continue;
    hints.push({ mask, preferred: false });
  }
  for (const h of hints) h.preferred = countOf(h.mask!) === minAffinitySize;
  return hints;
}
