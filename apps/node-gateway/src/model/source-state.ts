// Equality of a source's reported state: sources report, and the model rebuilds, only on a change.
import type { SourceState } from './types.js';

export const sameSourceState = (a: SourceState, b: SourceState): boolean =>
  a.status === b.status && a.reason === b.reason && a.lastSuccess === b.lastSuccess;
