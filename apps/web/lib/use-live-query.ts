'use client';
// Binds a LiveStream to a query key: every message goes through applyLiveMessage (seq guard) into
// the TanStack Query cache with setQueryData, so views only ever read the cache.
import { useEffect, useRef, useState } from 'react';
import { useQueryClient, type QueryKey } from '@tanstack/react-query';
import { applyLiveMessage, type LiveDocument, type LiveMessage } from './live-document';
import { LiveStream, type LinkStatus } from './live-stream';
import { streamUrl } from './api';
import { markOnce } from './perf-marks';

/** Messages outside the snapshot/patch sequence (e.g. `history`), handed over as they come. */
export type ExtraMessage = { type: string; seq: number } & Record<string, unknown>;

const KNOWN_TYPES = new Set(['snapshot', 'patch', 'heartbeat', 'error']);

export function useLiveQuery<T>(
  queryKey: QueryKey,
  path: string | null,
  onExtra?: (msg: ExtraMessage) => void,
): LinkStatus {
  const client = useQueryClient();
  const extra = useRef(onExtra);
  extra.current = onExtra;
  const [status, setStatus] = useState<LinkStatus>({ state: 'connecting', since: Date.now(), error: null });
  const keyHash = JSON.stringify(queryKey);

  useEffect(() => {
    if (path === null) return;
    const key = JSON.parse(keyHash) as QueryKey;
    const stream = new LiveStream<T>({
      url: (since) =>
        streamUrl(since === null ? path : `${path}${path.includes('?') ? '&' : '?'}since=${since}`),
      currentSeq: () => client.getQueryData<LiveDocument<T>>(key)?.seq ?? null,
      onStatus: setStatus,
      doc: document,
      onMessage: (msg: LiveMessage<T>) => {
        if (!KNOWN_TYPES.has(msg.type)) {
          // Not part of the seq guard: it never advances the document.
          extra.current?.(msg as unknown as ExtraMessage);
          return 'ok';
        }
        const r = applyLiveMessage(client.getQueryData<LiveDocument<T>>(key), msg);
        if (r.kind === 'applied') {
          if (msg.type === 'snapshot') markOnce(`plugboard:${String(key[0])}-data`);
          client.setQueryData<LiveDocument<T>>(key, r.doc);
          return 'ok';
        }
        if (r.kind === 'resync') return 'resync';
        if (r.kind === 'error') return 'error';
        return 'ok';
      },
    });
    stream.start();
    return () => stream.stop();
  }, [client, keyHash, path]);

  return status;
}
