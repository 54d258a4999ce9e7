// The runtime state of simulated pods and containers (what the kubelet keeps per pod across its
// pod workers, status manager and container runtime; release-1.33): phases, container states,
// the crash-loop back-off settings, and the small constructors the pod manager uses.

import type { Backoff } from '@plugboard/apimachinery';
import type { AdmissionDecision, QosClass } from '@plugboard/topology';
import type { KubeObject } from '../apiserver/object-store.js';
import type { PodExtendedResourceClaimStatus, PodResourceClaimStatus } from '../cm/dra/types.js';
import { ContainerLog } from '../kuberuntime/container-log.js';
import type { ContainerSpec, PodSpec } from './pod-spec.js';

export interface BackoffOptions {
  /** First back-off after the immediate restart (kubelet: 10 s). */
  initialMs: number;
  /** Cap (kubelet: 5 min). */
  maxMs: number;
  /** A container that ran this long before failing starts over at initialMs (kubelet: 10 min). */
  resetMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 10_000, maxMs: 300_000, resetMs: 600_000 };

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed';

export interface Terminated {
  exitCode: number;
  reason: string;
  message?: string;
  startedAt: Date;
  finishedAt: Date;
  containerId: string;
}

export type ContainerState =
  | { kind: 'waiting'; reason: string; message?: string }
  | { kind: 'running'; startedAt: Date }
  | ({ kind: 'terminated' } & Terminated);

export interface ContainerRuntime {
  spec: ContainerSpec;
  state: ContainerState;
  lastTerminated: Terminated | null;
  restartCount: number;
  /** The crash-loop back-off; null means the next failure restarts at once (first failure or after a reset). */
  backoff: Backoff | null;
  timer: NodeJS.Timeout | null;
  /** A start attempt is awaiting PreStartContainer. */
  starting: boolean;
  containerId: string | null;
  /** What the simulated workload wrote: the running instance and the previous one. */
  log: ContainerLog;
}

export interface PodRuntime {
  spec: PodSpec;
  createdAt: Date;
  startTime: Date | null;
  phase: PodPhase;
  reason?: string;
  message?: string;
  podIp: string;
  qos: QosClass;
  init: ContainerRuntime[];
  app: ContainerRuntime[];
  initDone: boolean;
  rejected: boolean;
  conditions: Map<string, { status: 'True' | 'False'; time: Date }>;
  gone: boolean;
  /** advance() is running / must run once more (a call arrived while it awaited a plugin). */
  advancing: boolean;
  advanceAgain: boolean;
  /** allocatedResourcesStatus frozen when a terminated pod released its devices. */
  finalResourceStatus: Map<string, ResourceStatus[]> | null;
  /** How the resource managers admitted (or refused) the pod: hints, merged affinity, placement. */
  admission: AdmissionDecision | null;
  /** `status.resourceClaimStatuses`: the claims the ResourceClaim controller generated from templates. */
  resourceClaimStatuses: PodResourceClaimStatus[];
  /**
   * `status.extendedResourceClaimStatus`: the special claim the scheduler created for the pod's
   * extended resources backed by DRA (DRAExtendedResource), null without one.
   */
  extendedResourceClaimStatus: PodExtendedResourceClaimStatus | null;
  /** The scheduler could not place the pod (PodScheduled False): it stays Pending, unbound. */
  unschedulable: { reason: string; message: string } | null;
  /**
   * The pod sandbox exists: the kubelet prepares a pod's ResourceClaims before it creates the
   * sandbox, and not again for container restarts.
   */
  sandboxReady: boolean;
  /** The next sync of a pod whose last one stopped before its containers (failed DRA prepare). */
  syncTimer: NodeJS.Timeout | null;
  /** The DisruptionTarget condition, set just before the pod is deleted by a controller. */
  disruption: { reason: string; message: string } | null;
}

export interface ResourceStatus {
  name: string;
  resources: { resourceID: string; health: string; message?: string }[];
}

/** The Pod object as the API serves it. */
export type AdmittedPod = KubeObject;

export const isTerminal = (p: PodRuntime) => p.phase === 'Failed' || p.phase === 'Succeeded';

/** Pod IPs from 10.88.0.0/16, skipping .0 and .1 of each /24. */
export function podIpFor(n: number): string {
  return `10.88.${Math.floor(n / 250) % 256}.${(n % 250) + 2}`;
}

/** Restartable init containers (sidecars) first, then app containers, as PodResources lists them. */
export function reportedContainers(p: PodRuntime): ContainerSpec[] {
  return [...p.init.filter((c) => c.spec.sidecar), ...p.app].map((c) => c.spec);
}

export function newContainer(spec: ContainerSpec): ContainerRuntime {
  return {
    spec,
    state: { kind: 'waiting', reason: spec.init ? 'PodInitializing' : 'ContainerCreating' },
    lastTerminated: null,
    restartCount: 0,
    backoff: null,
    timer: null,
    starting: false,
    containerId: null,
    log: new ContainerLog(),
  };
}

/** Reads the state afresh (after an await, TypeScript's narrowing of `c.state` is stale). */
export function stateOf(c: ContainerRuntime): ContainerState {
  return c.state;
}

export function clearTimer(c: ContainerRuntime): void {
  if (c.timer) clearTimeout(c.timer);
  c.timer = null;
}
