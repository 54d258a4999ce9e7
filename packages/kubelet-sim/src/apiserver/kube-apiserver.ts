// startApiServer: the simulator's kube-apiserver (cmd/kube-apiserver/app/server.go with
// pkg/controlplane's instance): the storage of every served resource (storage.ts, from the resource
// table), the resource.k8s.io strategies, the bootstrap controllers' objects (bootstrap.ts: the
// system namespaces, `default/kubernetes`) and the listener (server.ts). It starts first and knows
// no other part of the node: the control plane and the kubelet are its clients, and the kubelet
// connects through `kubelet` (kubelet-client.ts) once it runs.

import type { Logger } from 'pino';
import { compileSelector } from '../scheduler/index.js';
import { ensureNamespace, kubernetesService, SYSTEM_NAMESPACES } from './bootstrap.js';
import { KubeletClient } from './kubelet-client.js';
import { ResourceVersionClock, type KubeObject } from './object-store.js';
import { resourceStrategies } from './registry/resource.js';
import { storeKey } from './resources.js';
import { ApiServer } from './server.js';
import { ApiStorage } from './storage.js';

export interface ApiServerStartOptions {
  host: string;
  port: number;
  /** Bearer token required for mutations (control API, POST events). */
  token?: string | undefined;
  /** Events kept per resource for watches (default 1000). */
  watchHistorySize?: number | undefined;
  /** Event objects kept (default 1000). */
  maxEvents?: number | undefined;
  bookmarkIntervalMs?: number | undefined;
  podProxyTargets?: ReadonlyMap<string, string> | undefined;
  /** Serve the simulator's control API under /control/v1/ (default true). */
  controlApi?: boolean | undefined;
  logger: Logger;
}

export interface KubeApiServer {
  url: string;
  port: number;
  /** The resourceVersion clock every store shares (watches start from `clock.current()`). */
  clock: ResourceVersionClock;
  storage: ApiStorage;
  /** Where the node's kubelet connects (pod logs, the node proxy, the control API). */
  kubelet: KubeletClient;
  stop(): Promise<void>;
}

export async function startApiServer(o: ApiServerStartOptions): Promise<KubeApiServer> {
  const clock = new ResourceVersionClock();
  const storage = new ApiStorage({
    clock,
    historySize: o.watchHistorySize ?? 1000,
    maxObjects: new Map([[storeKey('', 'events'), o.maxEvents ?? 1000]]),
  });
  const namespaces = storage.store('', 'namespaces');
  for (const ns of SYSTEM_NAMESPACES) ensureNamespace(namespaces, ns);
  // A namespace a pod names exists from then on (the slice has no namespace writes).
  const namespaceWatch = storage.store('', 'pods').watch(
    null,
    () => true,
    (e) => {
      if (e.type === 'ADDED')
        ensureNamespace(namespaces, (e.object as KubeObject).metadata.namespace ?? 'default');
    },
  );
  const kubelet = new KubeletClient();
  const server = new ApiServer({
    host: o.host,
    port: o.port,
    token: o.token,
    podProxyTargets: o.podProxyTargets,
    ...(o.controlApi === false ? { controlApi: false } : {}),
    ...(o.bookmarkIntervalMs !== undefined ? { bookmarkIntervalMs: o.bookmarkIntervalMs } : {}),
    logger: o.logger,
    backend: {
      stores: storage.stores,
      strategies: resourceStrategies((expression) => {
        const compiled = compileSelector(expression);
        return compiled.ok ? null : compiled.error.detail;
      }),
      kubelet,
    },
  });
  const url = await server.start();
  storage.store('', 'services').upsert(kubernetesService(server.port));
  return {
    url,
    port: server.port,
    clock,
    storage,
    kubelet,
    async stop() {
      if (namespaceWatch.ok) namespaceWatch.cancel();
      await server.stop();
    },
  };
}
