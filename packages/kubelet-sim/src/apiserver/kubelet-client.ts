// The API server's connection to the node's kubelet (upstream: pkg/kubelet/client, which
// kube-apiserver dials at the address a Node reports for `nodes/{name}/proxy/…` and
// `pods/{name}/log`). The kubelet connects when it starts and disconnects when it stops, so the API
// server starts first and needs no kubelet to serve the API: until one is connected, a pod has no
// log, and the simulator's control API (control-api.ts), whose every call is the kubelet's, answers
// 503. The device taint eviction controller reaches the node's pods through it too: upstream it
// reads the pod informer and deletes through the API, but here a pod being deleted has no
// deletionTimestamp in its object, and only the kubelet knows it is already going.

import type { EvictionCandidate } from '../controlplane/device-taint-eviction.js';
import type { ControlBackend } from './control-api.js';
import { HttpError } from './http.js';
import type { PodContainers } from './pod-log.js';

export interface KubeletConnection extends ControlBackend {
  /** A pod's containers with their logs (`pods/{name}/log`). */
  containersOf: PodContainers;
  /** The kubelet's `GET /configz` document (`{"kubeletconfig": {…}}`), served through `nodes/{name}/proxy/configz`. */
  configz(): unknown;
  /** The node's pods with ResourceClaims that are not being deleted. */
  evictionCandidates(): EvictionCandidate[];
  /** The DisruptionTarget condition, then deletion; nothing for a pod that is gone or was replaced. */
  evict(namespace: string, name: string, uid: string, reason: string, message: string): Promise<void>;
}

export class KubeletClient {
  private connection: KubeletConnection | null = null;

  /** The kubelet starts serving; the returned function disconnects it (only if it is still the one). */
  connect(kubelet: KubeletConnection): () => void {
    this.connection = kubelet;
    return () => {
      if (this.connection === kubelet) this.connection = null;
    };
  }

  /** The connected kubelet, or null before it started and after it stopped. */
  current(): KubeletConnection | null {
    return this.connection;
  }

  /** The connected kubelet; a 503 when there is none. */
  required(): KubeletConnection {
    if (!this.connection) throw new HttpError(503, 'ServiceUnavailable', 'the kubelet is not running');
    return this.connection;
  }
}
