// The seam between the gateway and wherever the kubelet's topology facts come from: the Topology,
// CPU and Memory Manager settings in force, the admission decision per pod (hints per provider,
// merged hint, result), and "try to place" (a dry-run admission, or a real one).
//
// A real kubelet exposes none of this: its settings sit in its config file and its decisions only
// in its log. Today the one implementation is KubeletControl (kubelet-control.ts), which reads
// kubelet-sim's private control API behind the kubeconfig. main.ts chooses the source in one place;
// a real-cluster implementation (say, the kubelet's /configz through the API server's node proxy,
// with `forward` answering 503) implements this interface and is chosen there beside it. Consumers
// (the topology state, the placement routes, the Kubernetes informer's re-poll) see only this type.
import type { KubeletControlState } from '../model/topology.js';

/** Dry runs only: a Topology Manager policy/scope to try instead of the node's (a type literal, so it
 * indexes as strings). */
export type PlacementWhatIf = { topologyManagerPolicy?: string; topologyManagerScope?: string };

/** The kubelet's answer to a placement or admission, passed through as is (problem+json included). */
export interface PlacementAnswer {
  status: number;
  contentType: string;
  body: string;
}

export interface KubeletTopologySource {
  start(): void;
  stop(): void;
  /** Look again shortly: a pod was just admitted, rejected or removed. */
  pollSoon(delayMs?: number): void;
  /**
   * Sends a pod to the kubelet: a dry run (`admit` false, with an optional what-if policy/scope) or
   * an admission. Throws GatewayError('unavailable') when the source cannot place pods right now.
   */
  forward(pod: unknown, admit: boolean, whatIf?: PlacementWhatIf): Promise<PlacementAnswer>;
}

/**
 * What a source reports on every change: the kubelet's settings and admissions, or null with the
 * reason they are unknown.
 */
export type KubeletTopologyListener = (state: KubeletControlState | null, reason: string | null) => void;

/** Why the kubelet's settings are unknown when no source is chosen. */
export const NO_KUBELET_TOPOLOGY_SOURCE =
  'a real kubelet does not report its Topology Manager settings (only kubelet-sim does, behind a kubeconfig)';
