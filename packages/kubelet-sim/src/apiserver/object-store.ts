// In-memory object store with the API server's list/watch semantics (k8s.io/apiserver's storage
// and watch cache, Kubernetes 1.33): one resourceVersion clock shared by all kinds (like etcd's
// revision), a bounded per-kind event history, watches that replay from a resourceVersion or expire
// with 410 when it was compacted away, selector transitions (an object leaving a selector is a
// DELETED event for that watch) and bookmarks.

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid: string;
  resourceVersion?: string;
  creationTimestamp: string;
  [key: string]: unknown;
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchEvent {
  type: WatchEventType;
  object: unknown;
}

export type ObjectFilter = (obj: KubeObject) => boolean;

interface HistoryEntry {
  rv: number;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: KubeObject;
  previous: KubeObject | null;
}

interface Watcher {
  filter: ObjectFilter;
  send: (event: WatchEvent) => void;
}

export class ResourceVersionClock {
  private rv = 0;
  next(): number {
    return ++this.rv;
  }
  current(): number {
    return this.rv;
  }
}

export type WatchStart = { ok: true; cancel: () => void } | { ok: false; code: 410; message: string };

const key = (namespace: string | undefined, name: string) => `${namespace ?? ''}/${name}`;

export class ObjectStore {
  private readonly objects = new Map<string, KubeObject>();
  private readonly history: HistoryEntry[] = [];
  /** Highest resourceVersion dropped from the history; watches from before it get 410. */
  private compactedRv = 0;
  private readonly watchers = new Set<Watcher>();

  constructor(
    readonly kind: string,
    readonly listKind: string,
    readonly namespaced: boolean,
    private readonly clock: ResourceVersionClock,
    private readonly historySize: number,
    /** Cap on stored objects (events): the least recently changed one is deleted beyond it. */
    private readonly maxObjects = Infinity,
    /** `v1` for the core group, `group/version` otherwise (lists and bookmarks carry it). */
    readonly apiVersion = 'v1',
  ) {}

  get(namespace: string | undefined, name: string): KubeObject | undefined {
    return this.objects.get(key(namespace, name));
  }

  /** Stores a new state of an object; an unchanged object keeps its resourceVersion (no event). */
  upsert(obj: KubeObject): KubeObject {
    const k = key(obj.metadata.namespace, obj.metadata.name);
    const previous = this.objects.get(k) ?? null;
    if (previous && sameExceptVersion(previous, obj)) return previous;
    const rv = this.clock.next();
    const stored: KubeObject = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(rv) } };
    this.objects.set(k, stored);
    this.record({ rv, type: previous ? 'MODIFIED' : 'ADDED', object: stored, previous });
    if (this.objects.size > this.maxObjects) this.evictLeastRecentlyChanged();
    return stored;
  }

  delete(namespace: string | undefined, name: string): KubeObject | undefined {
    const k = key(namespace, name);
    const previous = this.objects.get(k);
    if (!previous) return undefined;
    this.objects.delete(k);
    const rv = this.clock.next();
    const deleted: KubeObject = {
      ...previous,
      metadata: { ...previous.metadata, resourceVersion: String(rv) },
    };
    this.record({ rv, type: 'DELETED', object: deleted, previous });
    return deleted;
  }

  private evictLeastRecentlyChanged(): void {
    let oldest: KubeObject | undefined;
    for (const o of this.objects.values()) {
      if (!oldest || Number(o.metadata.resourceVersion) < Number(oldest.metadata.resourceVersion)) oldest = o;
    }
    if (oldest) this.delete(oldest.metadata.namespace, oldest.metadata.name);
  }

  list(filter: ObjectFilter): { items: KubeObject[]; resourceVersion: string } {
    const items = [...this.objects.values()].filter(filter).sort(byNamespaceAndName);
    return { items, resourceVersion: String(this.clock.current()) };
  }

  /** Oldest resourceVersion a watch or an exact list can still start from. */
  oldestResourceVersion(): number {
    return this.compactedRv;
  }

  /**
   * Starts a watch. `fromRv` null means "current state, then changes" (synthetic ADDED events);
   * a number replays every retained change after it. Too old → 410, as the API server answers.
   */
  watch(
    fromRv: number | null,
    filter: ObjectFilter,
    send: (event: WatchEvent) => void,
    opts: { initialEventsEnd?: boolean } = {},
  ): WatchStart {
    if (fromRv !== null && fromRv < this.compactedRv) {
      return {
        ok: false,
        code: 410,
        message: `too old resource version: ${fromRv} (${this.compactedRv + 1})`,
      };
    }
    if (fromRv === null) {
      for (const obj of this.list(filter).items) send({ type: 'ADDED', object: obj });
      if (opts.initialEventsEnd) send(this.bookmark({ 'k8s.io/initial-events-end': 'true' }));
    } else {
      for (const entry of this.history) if (entry.rv > fromRv) deliver(entry, filter, send);
    }
    const watcher: Watcher = { filter, send };
    this.watchers.add(watcher);
    return { ok: true, cancel: () => this.watchers.delete(watcher) };
  }

  bookmark(annotations?: Record<string, string>): WatchEvent {
    return {
      type: 'BOOKMARK',
      object: {
        kind: this.kind,
        apiVersion: this.apiVersion,
        metadata: { resourceVersion: String(this.clock.current()), ...(annotations ? { annotations } : {}) },
      },
    };
  }

  private record(entry: HistoryEntry): void {
    this.history.push(entry);
    while (this.history.length > this.historySize) this.compactedRv = this.history.shift()!.rv;
    for (const w of this.watchers) deliver(entry, w.filter, w.send);
  }
}

function deliver(entry: HistoryEntry, filter: ObjectFilter, send: (event: WatchEvent) => void): void {
  const now = filter(entry.object);
  if (entry.type === 'ADDED') {
    if (now) send({ type: 'ADDED', object: entry.object });
    return;
  }
  if (entry.type === 'DELETED') {
    if (now || (entry.previous && filter(entry.previous))) send({ type: 'DELETED', object: entry.object });
    return;
  }
  const before = entry.previous ? filter(entry.previous) : false;
  if (before && now) send({ type: 'MODIFIED', object: entry.object });
  else if (!before && now) send({ type: 'ADDED', object: entry.object });
  else if (before && !now) send({ type: 'DELETED', object: entry.object });
}

/** Equal but for `metadata.resourceVersion` (what a write that changes nothing looks like). */
export function sameExceptVersion(a: KubeObject, b: KubeObject): boolean {
  const strip = (o: KubeObject) =>
    JSON.stringify({ ...o, metadata: { ...o.metadata, resourceVersion: undefined } });
  return strip(a) === strip(b);
}

function byNamespaceAndName(a: KubeObject, b: KubeObject): number {
  return (
    (a.metadata.namespace ?? '').localeCompare(b.metadata.namespace ?? '') ||
    a.metadata.name.localeCompare(b.metadata.name)
  );
}
