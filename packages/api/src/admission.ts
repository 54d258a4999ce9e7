// A kubelet's Topology Manager admission decision as kubelet-sim makes it and reports it on its
// control API (`GET /control/v1/state?view=admissions`, `POST /control/v1/pods?dryRun=All`), as the
// gateway predicts it for "try to place" (`POST /api/v1/placement`), and as the gateway shows it
// per pod ("why here?"). One declaration for all sides: @plugboard/topology produces it (narrowing
// the policy names to its own unions), the gateway and the dashboard read it.
import type { Timestamp } from './common.ts';

export interface TopologyHintView {
  /** null: any NUMA node (no preference). */
  numaNodes: number[] | null;
  preferred: boolean;
}

export interface ProviderHintsView {
  provider: 'devices' | 'cpu' | 'memory';
  /** null when the provider had nothing to say about this container (no preference at all). */
  resource: string | null;
  /** null: no preference; []: the request cannot be satisfied anywhere. */
  hints: TopologyHintView[] | null;
}

/** One merge of hints: per container (scope container) or once for the pod (container null). */
export interface AdmissionStep {
  container: string | null;
  hints: ProviderHintsView[];
  /** The policy's best hint (null under the `none` policy, which merges nothing). */
  merged: TopologyHintView | null;
  admit: boolean;
}

/** Where one container landed: its NUMA affinity, devices, exclusive CPUs and memory. */
export interface ContainerPlacement {
  container: string;
  init: boolean;
  /** The NUMA affinity the providers allocated with (null: none). */
  affinity: number[] | null;
  devices: {
    resource: string;
    deviceIds: string[];
    /** NUMA nodes per device ID ([] for a device without topology). */
    numaNodes: Record<string, number[]>;
    /** The plugin's GetPreferredAllocation answer; null when it was not asked. */
    preferred: string[] | null;
  }[];
  cpuIds: number[];
  memory: { type: string; bytes: number; numaNodes: number[] }[];
}

/** A Topology Manager admission decision. */
export interface AdmissionDecision {
  policy: string;
  scope: string;
  cpuManagerPolicy: string;
  memoryManagerPolicy: string;
  at: Timestamp;
  dryRun: boolean;
  result: 'admitted' | 'rejected';
  /** The kubelet's reason when rejected (TopologyAffinityError, UnexpectedAdmissionError, OutOf…). */
  reason: string | null;
  message: string | null;
  steps: AdmissionStep[];
  containers: ContainerPlacement[];
}

/**
 * A decision as the gateway shows it. `kubelet-sim`: what the simulated kubelet decided (a real
 * kubelet only logs its decision). `prediction`: what the gateway worked out itself with the
 * kubelet's own rules (@plugboard/topology) from sysfs, the kubelet's configz, PodResources and the
 * plugins' preferred allocation — a forecast of the kubelet's answer, not the answer.
 */
export interface AdmissionView extends AdmissionDecision {
  source: 'kubelet-sim' | 'prediction';
  /** A prediction's caveats: what it could not take into account (absent otherwise). */
  notes?: string[];
}
