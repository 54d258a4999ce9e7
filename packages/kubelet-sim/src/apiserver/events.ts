// core/v1 Events the simulated kubelet records about its pods (Started, BackOff, admission
// rejections, …), aggregated like client-go's recorder (k8s.io/client-go/tools/record, as the
// kubelet of release-1.33 uses it): a repeat of the same reason and message for the same object
// bumps `count` and `lastTimestamp` instead of creating a new Event.

import { randomBytes, randomUUID } from 'node:crypto';
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

  constructor(
    private readonly store: ObjectStore,
    private readonly nodeName: string,
  ) {}

  record(involved: InvolvedObject, type: EventType, reason: string, message: string): KubeObject {
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
    const name = `${involved.name}.${randomBytes(8).toString('hex')}`;
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
      involvedObject: { apiVersion: 'v1', ...involved, namespace },
      reason,
      message,
      source: { component: 'kubelet', host: this.nodeName },
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
      type,
      eventTime: null,
      reportingComponent: 'kubelet',
      reportingInstance: this.nodeName,
    });
  }
}
