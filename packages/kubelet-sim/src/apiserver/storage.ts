// The API server's storage: one ObjectStore per served resource that holds objects, made from the
// resource table (resources.ts) so that a resource is declared once — the way kube-apiserver's
// RESTStorageProviders (pkg/controlplane/apiserver, pkg/registry/<group>/rest) give every resource
// of the served groups its storage. The reviews (create-only, never stored) get none.

import { ObjectStore, type ResourceVersionClock } from './object-store.js';
import { groupVersion, RESOURCES, storeKey, type ResourceInfo } from './resources.js';

export interface ApiStorageOptions {
  clock: ResourceVersionClock;
  /** Events kept per store for watches that resume from a resourceVersion. */
  historySize: number;
  /**
   * A cap on stored objects per resource, keyed like storeKey (`/events`): the least recently
   * changed object goes beyond it. Events expire in a real cluster (1 h TTL); here they are capped.
   */
  maxObjects?: ReadonlyMap<string, number>;
}

/** A resource has storage when it can be read back (the reviews are only created). */
const stored = (r: ResourceInfo) => r.verbs.includes('get');

export class ApiStorage {
  /** Keyed `${group}/${resource}` (`/pods`, `resource.k8s.io/resourceclaims`), as the router looks them up. */
  readonly stores: ReadonlyMap<string, ObjectStore>;

  constructor(o: ApiStorageOptions) {
    this.stores = new Map(
      RESOURCES.filter(stored).map((r): [string, ObjectStore] => {
        const key = storeKey(r.group, r.resource);
        return [
          key,
          new ObjectStore(
            r.kind,
            r.listKind,
            r.namespaced,
            o.clock,
            o.historySize,
            o.maxObjects?.get(key) ?? Infinity,
            groupVersion(r),
          ),
        ];
      }),
    );
  }

  /** The store of a served resource (`store('', 'pods')`); throws for one the table does not store. */
  store(group: string, resource: string): ObjectStore {
    const store = this.stores.get(storeKey(group, resource));
    if (!store)
      throw new Error(`no storage for ${storeKey(group, resource)}: not a stored row of resources.ts`);
    return store;
  }
}
