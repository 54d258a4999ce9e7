// NUMA affinities as bitmasks (pkg/kubelet/cm/topologymanager/bitmask, release-1.33): bit i set =
// NUMA node i; IsNarrowerThan; every combination of NUMA nodes, smallest first (IterateBitMasks).

/** A NUMA affinity: bit i set = NUMA node i. */
export type Mask = number;

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
