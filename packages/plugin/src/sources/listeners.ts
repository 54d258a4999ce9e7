// Change-listener bookkeeping shared by every built-in source.
import compareNatural from 'string-natural-compare';

export class ChangeListeners {
  readonly #listeners = new Set<() => void>();

  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  notify(): void {
    for (const listener of this.#listeners) listener();
  }
}

/**
 * Orders IDs like people do: gpu-2 before gpu-10 (digit runs by value, the rest by code unit, so
 * the order does not depend on a locale). Not Intl.Collator: its ICU collation data costs the
 * gateway ~3 MB of resident memory for a sort of device IDs.
 */
export const naturalCompare = (a: string, b: string): number => compareNatural(a, b);

/** True when two device lists are the same as far as the kubelet and the dashboard can tell. */
export function sameDevices(
  a: readonly {
    id: string;
    health: string;
    reason: string | null;
    numaNodes: number[];
    deviceNodes: string[];
  }[],
  b: typeof a,
): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x === y) continue;
    if (
      x.id !== y.id ||
      x.health !== y.health ||
      x.reason !== y.reason ||
      !sameList(x.numaNodes, y.numaNodes) ||
      !sameList(x.deviceNodes, y.deviceNodes)
    ) {
      return false;
    }
  }
  return true;
}

/** Element-wise equality without building strings (this runs on every refresh of every device). */
function sameList<T>(a: readonly T[], b: readonly T[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
