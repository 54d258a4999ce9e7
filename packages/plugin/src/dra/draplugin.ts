// What a DRA driver implements so that the Helper (helper.ts) can serve it: preparing and
// unpreparing claims, nothing of the plumbing. Mirrors the DRAPlugin interface of
// k8s.io/dynamic-resource-allocation/kubeletplugin (draplugin.go, v0.37): PrepareResourceClaims,
// UnprepareResourceClaims, PrepareResult, Device. HandleError is the Helper's `slices-error` event
// here, and health comes from the driver's DeviceState rather than WatchHealthStatus.
import type { ResourceClaim } from './api-types.js';
import type { PreparedClaim } from './checkpoint.js';
import type { ClaimRef } from './claims.js';

/** One claim to prepare, as the Helper read it from the API server. */
export interface ClaimToPrepare {
  /** What the kubelet asked for (namespace, name, UID). */
  ref: ClaimRef;
  /**
   * The claim, found, with the UID the kubelet asked for and allocated (the Helper checked, as
   * upstream's does). null only for a claim the preparer said it holds prepared (`isPrepared`),
   * which the Helper does not read again.
   */
  claim: ResourceClaim | null;
}

/** The CDI device IDs of one allocated device (upstream's kubeletplugin.Device). */
export interface PreparedDeviceResult {
  /** Requests (or subrequests: the Helper strips them) this device serves. */
  requests: readonly string[];
  poolName: string;
  deviceName: string;
  cdiDeviceIds: readonly string[];
  shareId?: string;
}

/** The result of one claim (upstream's PrepareResult): its devices, or why it is not prepared. */
export type PrepareResult = { devices: readonly PreparedDeviceResult[] } | { error: string };

/** The result of unpreparing one claim: null error on success (also when it was not prepared). */
export interface UnprepareResult {
  error: string | null;
  /** The names of the devices it released, for the `unprepared` event. */
  devices?: readonly string[];
}

export interface DRAPlugin {
  /**
   * Prepares every claim (idempotent: the kubelet asks again after restarts). The result must have
   * one entry per claim UID; a per-claim error fails that claim alone. A rejection fails the
   * whole call. A driver should refuse a device already prepared for another claim: it is the last
   * line of defence against two workloads sharing one device.
   */
  prepareResourceClaims(claims: readonly ClaimToPrepare[]): Promise<Map<string, PrepareResult>>;
  /**
   * Undoes what prepare did (idempotent: a claim that is not prepared succeeds). The claim may be
   * gone from the API server and prepared by an earlier process: only its identity is given.
   */
  unprepareResourceClaims(claims: readonly ClaimRef[]): Promise<Map<string, UnprepareResult>>;
  /**
   * Optional: the claim is prepared already. The Helper then does not read it from the API server
   * (the answer comes from the driver's own record, and the claim may be gone by then).
   */
  isPrepared?(uid: string): boolean;
  /** Optional: the claims prepared now, for `DraDriver.preparedClaims()` (the gateway shows them). */
  preparedClaims?(): PreparedClaim[];
}
