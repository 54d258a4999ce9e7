// What the DRA manager keeps per prepared claim and per device health (pkg/kubelet/cm/dra/state
// state.go, 1.37): ClaimInfoState is what gets checkpointed, DeviceHealth what the health cache holds.

export interface DeviceState {
  poolName: string;
  deviceName: string;
  /** The share ID (consumable capacity); null when the driver did not set one. */
  shareId: string | null;
  /** The requests this device is for; empty means every request of the claim. */
  requestNames: string[];
  cdiDeviceIds: string[];
}

export interface DriverState {
  devices: DeviceState[];
}

export interface ClaimInfoState {
  claimUid: string;
  claimName: string;
  namespace: string;
  /** UIDs of the pods that reference the claim on this node. */
  podUids: Set<string>;
  /** Every driver with results in the claim's allocation, even those that prepared no device. */
  driverState: Map<string, DriverState>;
}

export type DeviceHealthStatus = 'Healthy' | 'Unhealthy' | 'Unknown';

export interface DeviceHealth {
  poolName: string;
  deviceName: string;
  health: DeviceHealthStatus;
  /** When the kubelet received this status (not the driver's last_updated_time), ms since the epoch. */
  lastUpdated: number;
  /** After this long without a report the health counts as Unknown (default 30 s). */
  healthCheckTimeoutMs: number;
  message: string;
}
