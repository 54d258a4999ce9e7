// core/v1 Events the simulated node records: the kubelet's about its pods (Pulled, Created,
// Started, BackOff, Killing, admission rejections) and its Node (Starting, NodeReady, …), and the
// control plane's that a real cluster would add (the scheduler's Scheduled, the node controller's
// RegisteredNode), aggregated like client-go's recorder (k8s.io/client-go/tools/record): a repeat
// of the same reason and message for the same object bumps `count` and `lastTimestamp` instead of
// creating a new Event.

import { randomUUID } from 'node:crypto';
import type { KubeObject, ObjectStore } from './object-store.js';
import { kubeTime } from '../util/kube-time.js';

export type EventType = 'Normal' | 'Warning';

export interface InvolvedObject {
  kind: string;
  namespace?: string;
  name: string;
  uid: string;
  fieldPath?: string;
}

export class EventRecorder {
  /** Aggregation key (object, reason, message) → Event name. */
  private readonly byKey = new Map<string, string>();
  private lastNanos = 0n;

  constructor(
    private readonly store: ObjectStore,
    private readonly nodeName: string,
  ) {}

  /**
   * `component` is the reporting component (`kubelet`, `default-scheduler`, `node-controller`);
   * only the kubelet's events carry the node as `source.host`, as upstream's recorders set it.
   */
  record(
    involved: InvolvedObject,
    type: EventType,
    reason: string,
    message: string,
    component = 'kubelet',
  ): KubeObject {
    const namespace = involved.namespace ?? 'default';
    const key = JSON.stringify([involved.kind, involved.uid, involved.fieldPath ?? '', reason, message]);
    const known = this.byKey.get(key);
    // The stored Event may have been evicted (maxEvents) since; then a new one starts.
    const existing = known ? this.store.get(namespace, known) : undefined;
    const now = kubeTime();
    if (existing) {
      return this.store.upsert({
        ...existing,
        count: Number(existing['count'] ?? 1) + 1,
        lastTimestamp: now,
      });
    }
    // client-go names an Event `<object>.<creation time in Unix nanoseconds, hex>`, so names sort
    // in creation order (which the API server's lists and `kubectl describe` keep for equal times).
    const nanos = BigInt(Date.now()) * 1_000_000n;
    this.lastNanos = nanos > this.lastNanos ? nanos : this.lastNanos + 1n;
    const name = `${involved.name}.${this.lastNanos.toString(16)}`;
    if (this.byKey.size > 10_000) this.byKey.clear(); // a lookup cache, not state: bounded
    this.byKey.set(key, name);
    return this.store.upsert({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: {
        name,
        namespace,
        uid: randomUUID(),
        creationTimestamp: now,
      },
      // A Node's events live in `default` while the Node itself has no namespace (upstream's
      // nodeRef: kind Node, name and UID = the node name, namespace "").
      involvedObject: { apiVersion: 'v1', ...involved },
      reason,
      message,
      source: component === 'kubelet' ? { component, host: this.nodeName } : { component },
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
      type,
      eventTime: null,
      reportingComponent: component,
      reportingInstance: component === 'kubelet' ? this.nodeName : '',
    });
  }
}
