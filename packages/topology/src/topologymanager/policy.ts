// How the Topology Manager merges hints (pkg/kubelet/cm/topologymanager/policy.go and
// policy_best_effort.go, policy_restricted.go, policy_single_numa_node.go, policy_none.go;
// release-1.33): the cross-product merge of all providers' hints (bitwise AND; preferred only when
// every hint is preferred and all affinities are equal), the choice of the best merged hint
// (preferred beats non-preferred, then the narrowest mask; non-preferred hints gravitate to the
// widest minimal need) and the four policies' admit decisions. Pure functions; scope.ts drives them.

import { TopologyError } from '../errors.js';
import { countOf, isNarrower, maskOf, type Mask } from './bitmask.js';
import type { ResourceHints, TopologyHint, TopologyManagerPolicy } from './topology-manager.js';

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
export function topologyAffinityError(): TopologyError {
  return new TopologyError('TopologyAffinityError', 'Resources cannot be allocated with Topology locality');
}
