'use client';
// The operator's bearer token for mutations. Kept in sessionStorage (gone when the tab closes),
// sent only as an Authorization header to this origin, which forwards it to the gateway.
import { useCallback, useSyncExternalStore } from 'react';

const KEY = 'plugboard.token';
const listeners = new Set<() => void>();

function read(): string | null {
  try {
    return window.sessionStorage.getItem(KEY);
  } catch {
    return null;
  }
}

export function useToken(): [string | null, (token: string | null) => void] {
  const token = useSyncExternalStore(
    (fn) => {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    read,
    () => null,
  );
  const set = useCallback((t: string | null) => {
    try {
      if (t) window.sessionStorage.setItem(KEY, t);
      else window.sessionStorage.removeItem(KEY);
    } catch {
      /* storage disabled: the token lives only until reload */
    }
    for (const fn of listeners) fn();
  }, []);
  return [token, set];
}
