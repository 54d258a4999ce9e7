// Scalar types every part of the contract shares.

export type Health = 'Healthy' | 'Unhealthy';

/** ISO-8601 timestamp string. */
export type Timestamp = string;
