// Whether two lists hold the same items in the same order (===, not deep equality): how the model's
// caches tell "built from the same inputs" and the sources tell "nothing changed".

export const sameItems = <T>(a: readonly T[], b: readonly T[]): boolean =>
  a === b || (a.length === b.length && a.every((x, i) => x === b[i]));
