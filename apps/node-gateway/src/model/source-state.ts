// Equality of a source's reported state: sources report, and the model rebuilds, only on a change.
import type { SourceState } from '@plugboard/api';

export const sameSourceState = (a: SourceState, b: SourceState): boolean =>
  a.status === b.status && a.reason === b.reason && a.lastSuccess === b.lastSuccess;
