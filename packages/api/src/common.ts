// Scalar types every part of the contract shares.

export type Health = 'Healthy' | 'Unhealthy';

/** ISO-8601 timestamp string. */
export type Timestamp = string;

/** A simulated fault holds a device: 'active' once the kubelet was told, 'pending' until then. */
export type DeviceFaultPhase = 'active' | 'pending';
