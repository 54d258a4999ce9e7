// Wraps a component in a QueryClient whose last-hour history of a node is already known, so a
// component test reads history without a fetch.
import type { ReactNode } from 'react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { HISTORY_WINDOWS, type HistoryView } from '../lib/history';
import { queryKeys } from '../lib/queries';

export function withHistory(children: ReactNode, nodeName: string, view: Partial<HistoryView> = {}) {
  // gcTime Infinity: no garbage-collection timer keeps the test process alive after cleanup.
  const client = new QueryClient({ defaultOptions: { queries: { gcTime: Infinity } } });
  const win = HISTORY_WINDOWS[1];
  client.setQueryData<HistoryView>(queryKeys.history(nodeName, win.ms), {
    windowMs: win.ms,
    stepMs: 1000,
    resources: {},
    devices: {},
    draDrivers: {},
    draDevices: {},
    draRecorded: true,
    ...view,
  });
  return <QueryClientProvider client={client}>{children}</QueryClientProvider>;
}
