// core/v1 Events the simulated kubelet records about its pods (Started, BackOff, admission
// rejections, …), aggregated like client-go's recorder: a repeat of the same reason and message
// for the same object bumps `count` and `lastTimestamp` instead of creating a new Event.

import { randomBytes, randomUUID } from 'node:crypto';
import type { KubeObject, ObjectStore } from './object-store.js';
import { kubeTime } from './kube-time.js';

export type EventType = 'Normal' | 'Warning';

export interface InvolvedObject {
  kind: string;
  namespace?: string;
  name: string;
  uid: string;
  fieldPath?: string;
}

export class EventRecorder {
  constructor(
    private readonly store: ObjectStore,
    private readonly nodeName: string,
  ) {}

  record(involved: InvolvedObject, type: EventType, reason: string, message: string): KubeObject {
    const namespace = involved.namespace ?? 'default';
    const existing = this.store.list(
      (e) =>
        e.metadata.namespace === namespace &&
        sameInvolved(e, involved) &&
        e['reason'] === reason &&
        e['message'] === message,
    ).items[0];
    const now = kubeTime();
    if (existing) {
      return this.store.upsert({
        ...existing,
        count: Number(existing['count'] ?? 1) + 1,
        lastTimestamp: now,
      });
    }
    return this.store.upsert({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: {
        name: `${involved.name}.${randomBytes(8).toString('hex')}`,
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

function sameInvolved(e: KubeObject, involved: InvolvedObject): boolean {
  const o = e['involvedObject'] as InvolvedObject | undefined;
  return (
    !!o &&
    o.uid === involved.uid &&
    o.kind === involved.kind &&
    (o.fieldPath ?? '') === (involved.fieldPath ?? '')
  );
}
