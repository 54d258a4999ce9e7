// The live node model: sources push their latest state in, the model rebuilds the snapshot once per
// turn of the event loop (coalescing bursts), diffs it against the previous one and emits a `change`
// with the JSON Patch for the full document and for the summary view. Unchanged inputs emit nothing.
import { EventEmitter } from 'node:events';
import {
  BuildCache,
  buildSnapshot,
  type KubeInput,
  type ModelInputs,
  type PodResourcesInput,
  type ResourceInput,
} from './build.js';
import type { TopologyInput } from './topology.js';
import type { DraDriverInput } from './dra.js';
import { diffAndShare, diffDocuments } from './diff.js';
import { summarize } from './summary.js';
import { sameSourceState } from './source-state.js';
import type {
  FaultRecord,
  GatewayInfo,
  JsonPatchOp,
  NodeEvent,
  NodeSnapshot,
  NodeSummary,
  SourceState,
  SourcesState,
} from '@plugboard/api';

export interface ModelChange {
  snapshot: NodeSnapshot;
  ops: JsonPatchOp[];
  summary: NodeSummary;
  /** Empty when the change did not touch the summary. */
  summaryOps: JsonPatchOp[];
  /** performance.now() when the rebuild began (for latency metrics). */
  startedAt: number;
}

export type NewNodeEvent = Omit<NodeEvent, 'seq' | 'at'> & { at?: string };

export interface NodeModelOptions {
  nodeName: string;
  gateway: GatewayInfo;
  eventRingSize: number;
  sources?: Partial<SourcesState>;
  now?: () => Date;
}

interface NodeModelEvents {
  change: [change: ModelChange];
  event: [event: NodeEvent];
}

export class NodeModel extends EventEmitter<NodeModelEvents> {
  private readonly now: () => Date;
  private readonly ringSize: number;
  private readonly inputs: Omit<ModelInputs, 'updatedAt' | 'resources' | 'events' | 'draDrivers'>;
  private readonly resources = new Map<string, ResourceInput>();
  private readonly draDrivers = new Map<string, DraDriverInput>();
  private events: NodeEvent[] = [];
  private eventSeq = 0;
  private current: NodeSnapshot;
  private currentSummary: NodeSummary;
  private scheduled: NodeJS.Immediate | null = null;
  private readonly cache = new BuildCache();

  constructor(options: NodeModelOptions) {
    super();
    this.now = options.now ?? (() => new Date());
    this.ringSize = options.eventRingSize;
    const idle: SourceState = { status: 'disabled', lastSuccess: null, reason: 'not configured' };
    this.inputs = {
      nodeName: options.nodeName,
      gateway: options.gateway,
      podResources: null,
      kube: null,
      faults: [],
      topology: null,
      sources: { podResources: idle, kubernetes: idle, ...options.sources },
    };
    this.current = this.build(this.now().toISOString());
    this.currentSummary = summarize(this.current);
  }

  snapshot(): NodeSnapshot {
    return this.current;
  }

  /** The latest PodResources answer and API-server view as pushed in (what a placement prediction reads). */
  sourceInputs(): { podResources: PodResourcesInput | null; kube: KubeInput | null } {
    return { podResources: this.inputs.podResources, kube: this.inputs.kube };
  }

  summary(): NodeSummary {
    return this.currentSummary;
  }

  setResource(resource: ResourceInput): void {
    this.resources.set(resource.name, resource);
    this.invalidate();
  }

  removeResource(name: string): void {
    if (this.resources.delete(name)) this.invalidate();
  }

  /** A DRA driver this gateway runs (sources/dra-drivers.ts). */
  setDraDriver(driver: DraDriverInput): void {
    this.draDrivers.set(driver.name, driver);
    this.invalidate();
  }

  removeDraDriver(name: string): void {
    if (this.draDrivers.delete(name)) this.invalidate();
  }

  setPodResources(value: PodResourcesInput | null): void {
    this.inputs.podResources = value;
    this.invalidate();
  }

  setKube(value: KubeInput | null): void {
    this.inputs.kube = value;
    this.invalidate();
  }

  setTopology(value: TopologyInput | null): void {
    this.inputs.topology = value;
    this.invalidate();
  }

  setFaults(faults: readonly FaultRecord[]): void {
    this.inputs.faults = faults;
    this.invalidate();
  }

  setGateway(info: Partial<GatewayInfo>): void {
    this.inputs.gateway = { ...this.inputs.gateway, ...info };
    this.invalidate();
  }

  setSource(name: keyof SourcesState, state: SourceState): void {
    if (sameSourceState(this.inputs.sources[name], state)) return;
    this.inputs.sources = { ...this.inputs.sources, [name]: state };
    this.invalidate();
  }

  source(name: keyof SourcesState): SourceState {
    return this.inputs.sources[name];
  }

  /** Appends to the bounded event ring (oldest dropped first). */
  addEvent(event: NewNodeEvent): NodeEvent {
    const full: NodeEvent = { ...event, seq: ++this.eventSeq, at: event.at ?? this.now().toISOString() };
    const next =
      this.events.length >= this.ringSize
        ? this.events.slice(this.events.length - this.ringSize + 1)
        : this.events.slice();
    next.push(full);
    this.events = next;
    this.emit('event', full);
    this.invalidate();
    return full;
  }

  /** Rebuild at the end of this turn of the event loop; many updates in one turn make one patch. */
  invalidate(): void {
    this.scheduled ??= setImmediate(() => {
      this.scheduled = null;
      this.flush();
    });
  }

  /** Rebuilds now; returns the change (or null when nothing changed). */
  flush(): ModelChange | null {
    if (this.scheduled) {
      clearImmediate(this.scheduled);
      this.scheduled = null;
    }
    const startedAt = performance.now();
    const prev = this.current;
    const diff = diffAndShare(prev, this.build(prev.updatedAt));
    let next = diff.document;
    let ops = diff.ops;
    this.cache.adopt(next);
    if (ops.length === 0) return null;
    const updatedAt = this.now().toISOString();
    if (updatedAt !== prev.updatedAt) {
      next = { ...next, updatedAt };
      ops = [...ops, { op: 'replace', path: '/updatedAt', value: updatedAt }];
    }
    this.current = next;
    const prevSummary = this.currentSummary;
    this.currentSummary = summarize(next);
    const summaryOps = diffDocuments(
      { ...prevSummary, updatedAt: '' },
      { ...this.currentSummary, updatedAt: '' },
    );
    if (summaryOps.length)
      summaryOps.push({ op: 'replace', path: '/updatedAt', value: this.currentSummary.updatedAt });
    else this.currentSummary = { ...this.currentSummary, updatedAt: prevSummary.updatedAt };
    const change: ModelChange = { snapshot: next, ops, summary: this.currentSummary, summaryOps, startedAt };
    this.emit('change', change);
    return change;
  }

  /** Stops pending rebuilds (the model itself holds no other resources). */
  close(): void {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = null;
  }

  private build(updatedAt: string): NodeSnapshot {
    return buildSnapshot(
      {
        ...this.inputs,
        updatedAt,
        now: this.now().toISOString(),
        // Code-unit order: resource names are ASCII, and localeCompare would load ICU collation data.
        resources: [...this.resources.values()].sort((a, b) =>
          a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
        ),
        draDrivers: [...this.draDrivers.values()].sort((a, b) =>
          a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
        ),
        events: this.events,
      },
      this.cache,
    );
  }
}
