// The cluster pages' server render (the overview, the migration view): the cluster hub's current
// document in the query cache, so the first HTML already has every node's numbers (no "Connecting"
// flash, and readable without JavaScript); the browser's stream then takes over the same query.
import type { ReactNode } from 'react';
import { dehydrate, HydrationBoundary, QueryClient } from '@tanstack/react-query';
import { connection } from 'next/server';
import type { ClusterDocument } from '../lib/cluster-types';
import type { LiveDocument } from '../lib/live-document';
import { clusterQuery } from '../lib/queries';
import { readClusterSnapshot } from '../server/cluster-snapshot';

/**
 * How long the first render waits for gateways the hub has not heard from yet (only when the hub
 * was idle). A gateway that is slower than this shows as connecting and the stream fills it in.
 */
const FIRST_SUMMARY_WAIT_MS = 1000;

export async function ClusterHydration({ children }: { children: ReactNode }) {
  // Per request, never prerendered at build time: the data is the cluster's current state.
  await connection();
  const client = new QueryClient();
  const snapshot = await readClusterSnapshot(FIRST_SUMMARY_WAIT_MS);
  if (snapshot) {
    await client.prefetchQuery({
      ...clusterQuery(),
      queryFn: (): LiveDocument<ClusterDocument> => ({
        seq: snapshot.seq,
        data: snapshot.doc,
        receivedAt: Date.now(),
      }),
    });
  }
  return <HydrationBoundary state={dehydrate(client)}>{children}</HydrationBoundary>;
}
