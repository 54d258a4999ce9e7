// The node lease (k8s.io/component-helpers/apimachinery/lease controller, as pkg/kubelet runs it):
// a coordination.k8s.io/v1 Lease named after the node in `kube-node-lease`, owned by the Node,
// held by the node (`holderIdentity`), `leaseDurationSeconds` 40 (the kubelet's
// nodeLeaseDurationSeconds) and renewed every quarter of it — 10 s — by bumping `renewTime`. The
// node controller reads it as the node's heartbeat; `kubectl describe node` shows it.

import { randomUUID } from 'node:crypto';
import type { KubeObject, ObjectStore } from '../apiserver/object-store.js';
import { kubeTime, microTime } from '../util/kube-time.js';

export const NODE_LEASE_NAMESPACE = 'kube-node-lease';
export const NODE_LEASE_DURATION_SECONDS = 40;
/** renewIntervalFraction 0.25 of the lease duration. */
export const NODE_LEASE_RENEW_INTERVAL_MS = (NODE_LEASE_DURATION_SECONDS * 1000) / 4;

export { microTime };

export interface NodeLeaseOptions {
  store: ObjectStore;
  nodeName: string;
  nodeUid: string;
  renewIntervalMs?: number;
}

export class NodeLeaseController {
  private timer: NodeJS.Timeout | null = null;
  private readonly uid = randomUUID();
  private readonly created = new Date();

  constructor(private readonly o: NodeLeaseOptions) {}

  /** Creates (or takes over) the lease now and renews it on every interval. */
  start(): void {
    this.renew();
    this.timer = setInterval(() => this.renew(), this.o.renewIntervalMs ?? NODE_LEASE_RENEW_INTERVAL_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  renew(now: Date = new Date()): KubeObject {
    return this.o.store.upsert({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: this.o.nodeName,
        namespace: NODE_LEASE_NAMESPACE,
        uid: this.uid,
        creationTimestamp: kubeTime(this.created),
        ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: this.o.nodeName, uid: this.o.nodeUid }],
      },
      spec: {
        holderIdentity: this.o.nodeName,
        leaseDurationSeconds: NODE_LEASE_DURATION_SECONDS,
        renewTime: microTime(now),
      },
    });
  }
}
