// Hands the cluster hub's document to the pages Next renders in this process, so the overview's
// first HTML already has every node's numbers. Next bundles app/ separately from server.ts, so a
// module-level variable would exist once per bundle; the process-global slot below is the one
// place both see. Without a provider (a page rendered outside server.ts, e.g. at build time) pages
// get null and the browser bootstraps over REST as before.
import type { ClusterDocument } from '../lib/cluster-types';

export interface ClusterSnapshot {
  seq: number;
  doc: ClusterDocument;
}

/** The hub's current document, waiting at most `maxWaitMs` for gateways not yet heard from. */
export type ClusterSnapshotSource = (maxWaitMs: number) => Promise<ClusterSnapshot>;

const SLOT = Symbol.for('plugboard.web.cluster-snapshot');

type GlobalWithSlot = typeof globalThis & { [SLOT]?: ClusterSnapshotSource };

export function provideClusterSnapshot(source: ClusterSnapshotSource | null): void {
  const g = globalThis as GlobalWithSlot;
  if (source) g[SLOT] = source;
  else delete g[SLOT];
}

export async function readClusterSnapshot(maxWaitMs: number): Promise<ClusterSnapshot | null> {
  const source = (globalThis as GlobalWithSlot)[SLOT];
  return source ? source(maxWaitMs) : null;
}
