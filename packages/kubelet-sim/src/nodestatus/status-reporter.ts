// How the kubelet reports its Node (pkg/kubelet/kubelet_node_status.go): the status is computed
// every nodeStatusUpdateFrequency and written when it changed, or — with the node lease as the
// heartbeat — at least every nodeStatusReportFrequency (5 minutes), each write bumping the
// conditions' lastHeartbeatTime. Registration records the events a node shows in `kubectl
// describe node`: the kubelet's Starting, NodeAllocatableEnforced and the condition events
// (setters.go records one when a condition first takes its value), the node controller's
// RegisteredNode; a kubelet restart records Starting and NodeAllocatableEnforced again.

import type { EventRecorder, InvolvedObject } from '../apiserver/events.js';
import { sameExceptVersion, type KubeObject, type ObjectStore } from '../apiserver/object-store.js';
import { renderNode, type NodeObjectInput } from './setters.js';

export const NODE_STATUS_REPORT_FREQUENCY_MS = 5 * 60_000;

export interface NodeStatusReporterOptions {
  store: ObjectStore;
  events: EventRecorder;
  /** The Node as the kubelet would compute it now, without the heartbeat. */
  compute: () => Omit<NodeObjectInput, 'heartbeat'>;
  /** Called with the Node after every write. */
  onWrite: (node: KubeObject) => void;
  reportFrequencyMs?: number;
}

export class NodeStatusReporter {
  private heartbeat = new Date();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly o: NodeStatusReporterOptions) {}

  /** Registers the node (first write) and records the start-up events. */
  register(): KubeObject {
    const node = this.report();
    const name = node.metadata.name;
    const ref = this.nodeRef(name);
    const ev = this.o.events;
    ev.record(ref, 'Normal', 'Starting', 'Starting kubelet.');
    ev.record(ref, 'Normal', 'NodeAllocatableEnforced', 'Updated Node Allocatable limit across pods');
    for (const reason of ['NodeHasSufficientMemory', 'NodeHasNoDiskPressure', 'NodeHasSufficientPID'])
      ev.record(ref, 'Normal', reason, `Node ${name} status is now: ${reason}`);
    // The node controller refers to the Node object itself (its real UID), not the kubelet's nodeRef.
    ev.record(
      { kind: 'Node', name, uid: node.metadata.uid },
      'Normal',
      'RegisteredNode',
      `Node ${name} event: Registered Node ${name} in Controller`,
      'node-controller',
    );
    ev.record(ref, 'Normal', 'NodeReady', `Node ${name} status is now: NodeReady`);
    this.timer = setInterval(
      () => this.report(),
      this.o.reportFrequencyMs ?? NODE_STATUS_REPORT_FREQUENCY_MS,
    );
    this.timer.unref();
    return node;
  }

  /** A kubelet restart: the new kubelet records its start again (conditions did not change). */
  restarted(): void {
    const ref = this.nodeRef(this.o.compute().name);
    this.o.events.record(ref, 'Normal', 'Starting', 'Starting kubelet.');
    this.o.events.record(
      ref,
      'Normal',
      'NodeAllocatableEnforced',
      'Updated Node Allocatable limit across pods',
    );
  }

  /** Writes the status if it changed since the last write (a new heartbeat with it). */
  update(): void {
    const input = this.o.compute();
    const current = this.o.store.get(undefined, input.name);
    const unchanged = renderNode({ ...input, heartbeat: this.heartbeat });
    if (current && sameExceptVersion(current, unchanged)) return;
    this.report();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private report(): KubeObject {
    this.heartbeat = new Date();
    const node = this.o.store.upsert(renderNode({ ...this.o.compute(), heartbeat: this.heartbeat }));
    this.o.onWrite(node);
    return node;
  }

  /** The kubelet's nodeRef: kind Node, name and UID both the node name, no namespace. */
  private nodeRef(name: string): InvolvedObject {
    return { kind: 'Node', name, uid: name };
  }
}
