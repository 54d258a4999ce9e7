// The Topology Manager's hint arithmetic (pkg/kubelet/cm/topologymanager), written from its
// documented rules: NUMA affinities as bitmasks, hint generation over every NUMA-node
// combination (shared by the device, CPU and Memory Manager hint providers), the cross-product
// merge of all providers' hints (bitwise AND; preferred only when every hint is preferred and
// all affinities are equal), the choice of the best merged hint (preferred beats non-preferred,
// then the narrowest mask, non-preferred hints gravitate to the widest minimal need) and the four
// policies' admit decisions. Pure functions; admission.ts drives them.

import { KubeletSimError } from '../../errors.js';

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

/** A NUMA affinity: bit i set = NUMA node i. */
export type Mask = number;

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

export const maskOf = (ids: Iterable<number>): Mask => {
  let m = 0;
  for (const id of ids) m |= 1 << id;
  return m;
};

export const bitsOf = (mask: Mask): number[] => {
  const out: number[] = [];
  for (let i = 0; mask >> i; i++) if ((mask >> i) & 1) out.push(i);
  return out;
};

export const countOf = (mask: Mask): number => bitsOf(mask).length;

export const isSet = (mask: Mask, id: number): boolean => ((mask >> id) & 1) === 1;

/** IsNarrowerThan: fewer NUMA nodes, or as many and lower-numbered ones. */
export function isNarrower(a: Mask, b: Mask): boolean {
  const ca = countOf(a);
  const cb = countOf(b);
  return ca < cb || (ca === cb && a < b);
}

/** Every non-empty combination of NUMA nodes, smallest first (bitmask.IterateBitMasks). */
export function allMasks(numaIds: readonly number[]): Mask[] {
  const out: Mask[] = [];
  const ids = [...numaIds].sort((a, b) => a - b);
  const combine = (start: number, k: number, acc: number[]): void => {
    if (acc.length === k) {
      out.push(maskOf(acc));
      return;
    }
    for (let i = start; i < ids.length; i++) combine(i + 1, k, [...acc, ids[i]!]);
  };
  for (let k = 1; k <= ids.length; k++) combine(0, k, []);
  return out;
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

/** filterProvidersHints: one list per resource; no preference → [{any, preferred}], none possible → [{any, not preferred}]. */
export function filterProvidersHints(providers: readonly ResourceHints[]): TopologyHint[][] {
  return providers.map((p) =>
    p.hints === null
      ? [{ mask: null, preferred: true }]
      : p.hints.length === 0
        ? [{ mask: null, preferred: false }]
        : p.hints,
  );
}

/** filterSingleNumaHints: only "don't care" and single-NUMA-node hints that are preferred. */
export function filterSingleNumaHints(lists: TopologyHint[][]): TopologyHint[][] {
  return lists.map((hints) => hints.filter((h) => h.preferred && (h.mask === null || countOf(h.mask) === 1)));
}

/** mergePermutation: AND of the affinities; preferred if all preferred and all affinities equal. */
export function mergePermutation(defaultMask: Mask, permutation: readonly TopologyHint[]): TopologyHint {
  let preferred = true;
  let merged = defaultMask;
  let first: Mask | null = null;
  for (const h of permutation) {
    if (h.mask !== null) {
      first ??= h.mask;
      if (h.mask !== first) preferred = false;
      merged &= h.mask;
    }
    if (!h.preferred) preferred = false;
  }
  return { mask: merged, preferred };
}

function narrowestCount(hints: readonly TopologyHint[]): number | null {
  let best: Mask | null = null;
  for (const h of hints) if (h.mask !== null && (best === null || isNarrower(h.mask, best))) best = h.mask;
  return best === null ? null : countOf(best);
}

/**
 * The HintMerger: over the cross-product of the lists, a preferred merged hint beats a
 * non-preferred one; between two preferred ones the narrower wins; between non-preferred ones
 * the count closest to (not above) the largest of the providers' narrowest widths wins.
 */
export function mergeHints(numaIds: readonly number[], lists: readonly TopologyHint[][]): TopologyHint {
  const defaultMask = maskOf(numaIds);
  const bestNonPreferred = Math.max(0, ...lists.map((l) => narrowestCount(l) ?? 0));
  const narrower = (current: TopologyHint, candidate: TopologyHint): TopologyHint =>
    candidate.mask !== current.mask && isNarrower(candidate.mask!, current.mask!) ? candidate : current;
  const compare = (current: TopologyHint | null, candidate: TopologyHint): TopologyHint | null => {
    const cc = countOf(candidate.mask!);
    if (cc === 0) return current;
    if (!current) return candidate;
    if (!current.preferred && candidate.preferred) return candidate;
    if (current.preferred && !candidate.preferred) return current;
    if (current.preferred && candidate.preferred) return narrower(current, candidate);
    const cur = countOf(current.mask!);
    if (cur > bestNonPreferred) return narrower(current, candidate);
    if (cur === bestNonPreferred) return cc === bestNonPreferred ? narrower(current, candidate) : current;
    if (cc > bestNonPreferred) return current;
    if (cc === bestNonPreferred) return candidate;
    if (cc > cur) return candidate;
    if (cc < cur) return current;
    return narrower(current, candidate);
  };
  let best: TopologyHint | null = null;
  const iterate = (i: number, acc: TopologyHint[]): void => {
    if (i === lists.length) {
      best = compare(best, mergePermutation(defaultMask, acc));
      return;
    }
    for (const h of lists[i]!) iterate(i + 1, [...acc, h]);
  };
  iterate(0, []);
  return best ?? { mask: defaultMask, preferred: false };
}

export interface PolicyDecision {
  hint: TopologyHint;
  admit: boolean;
}

/** A policy's Merge: the best hint and whether the pod (or container) may be admitted. */
export function applyPolicy(
  policy: TopologyManagerPolicy,
  numaIds: readonly number[],
  providers: readonly ResourceHints[],
): PolicyDecision {
  if (policy === 'none') return { hint: { mask: null, preferred: false }, admit: true };
  const filtered = filterProvidersHints(providers);
  if (policy === 'single-numa-node') {
    const best = mergeHints(numaIds, filterSingleNumaHints(filtered));
    // An any-NUMA result is reported as "no affinity", as the kubelet does.
    const hint = best.mask === maskOf(numaIds) ? { mask: null, preferred: best.preferred } : best;
    return { hint, admit: hint.preferred };
  }
  const hint = mergeHints(numaIds, filtered);
  return { hint, admit: policy === 'best-effort' ? true : hint.preferred };
}

/** The kubelet's TopologyAffinityError, as GetPodAdmitResult turns it into a rejection. */
export function topologyAffinityError(): KubeletSimError {
  return new KubeletSimError(
    'TopologyAffinityError',
    'Resources cannot be allocated with Topology locality',
    {
      reason: 'TopologyAffinityError',
    },
  );
}
