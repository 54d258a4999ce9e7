// The seams between the gateway and the kubelet's topology facts. Two sources, chosen in main.ts:
//   - the kubelet's configz through the API server's node proxy (kubelet-configz.ts): the Topology,
//     CPU and Memory Manager settings, on any kubelet — what the NUMA views and the "try to place"
//     prediction (model/placement.ts) need;
//   - kubelet-sim's private control API behind a kubeconfig (kubelet-control.ts, this interface):
//     optional extra detail a real kubelet only writes to its log — the admission decision per pod
//     (hints per provider, merged hint, result) — and admitting a previewed pod.
// Consumers (the topology state, the placement routes, the Kubernetes informer's re-poll) see only
// these types.
import type { KubeletControlState } from '../model/topology.js';

/** The kubelet's answer to an admission, passed through as is (problem+json included). */
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
  /** Admits a pod through the kubelet. Throws GatewayError('unavailable') when it cannot right now. */
  admit(pod: unknown): Promise<PlacementAnswer>;
}

/**
 * What the control source reports on every change: the kubelet's settings and admissions, or null
 * with the reason they are unknown.
 */
export type KubeletTopologyListener = (state: KubeletControlState | null, reason: string | null) => void;

/** Why there are no per-pod admission decisions and no admit path without a kubelet-sim. */
export const NO_KUBELET_CONTROL =
  "admitting a pod needs kubelet-sim's control API behind a kubeconfig; on a real cluster create the pod through the API server (a real kubelet reports no admission decisions, only its log does)";
