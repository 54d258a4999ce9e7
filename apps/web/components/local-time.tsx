'use client';
// A time in the reader's locale and time zone. The server knows neither, so server-rendered HTML
// (and the hydration pass, which must match it) shows the time in UTC; the browser switches to
// local time right after hydrating. Without this a server in UTC and a reader elsewhere would
// disagree and React would throw away the server's HTML.
import { useSyncExternalStore } from 'react';
import { formatTime } from '../lib/format';

const subscribeNever = () => () => {};

function utcTime(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : `${d.toISOString().slice(11, 19)} UTC`;
}

export function LocalTime({ iso }: { iso: string | null }) {
  const hydrated = useSyncExternalStore(
    subscribeNever,
    () => true,
    () => false,
  );
  if (!iso) return <>{formatTime(iso)}</>;
  return <time dateTime={iso}>{hydrated ? formatTime(iso) : utcTime(iso)}</time>;
}
