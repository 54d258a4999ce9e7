// The DRAResourceHealth service (KEP-4680): NodeWatchResources streams the health of every device
// of the driver, as a complete list on open and on every change (a fault from the overlay or a
// health change of the device source goes out in the same microtask), so the kubelet can put it in
// the pods' allocatedResourcesStatus. The kubelet stamps each report with its own receive time and
// treats a device as Unknown once that is older than the device's health_check_timeout_seconds
// (30 s when 0), so the list is also re-sent as a heartbeat at a third of that timeout.
// v1 and v1alpha1 have the same messages on the wire: one encoding serves both services.
import type { ServerWritableStream } from '@grpc/grpc-js';
import { drahealthv1, drahealthv1alpha1 } from '@plugboard/proto';
import type { PluginDevice } from '../types.js';
import { draDeviceName } from './slice-devices.js';

/** The kubelet's DefaultHealthTimeout (pkg/kubelet/cm/dra/healthinfo.go). */
export const KUBELET_DEFAULT_HEALTH_TIMEOUT_SECONDS = 30;
/** The kubelet truncates longer messages; so do we, the same way. */
const MAX_MESSAGE = 1024;

export function healthMessage(reason: string | null): string {
  if (!reason) return '';
  return reason.length > MAX_MESSAGE ? `${reason.slice(0, MAX_MESSAGE - 3)}...` : reason;
}

/** The NodeWatchResourcesResponse of a device list (full list, as the kubelet expects). */
export function encodeHealth(
  devices: readonly PluginDevice[],
  poolName: string,
  healthCheckTimeoutSeconds: number,
  nowSeconds: number,
  /** A device's names in the ResourceSlices (its partitions'); default its own. */
  deviceNames: (device: PluginDevice) => string[] = (d) => [draDeviceName(d.id)],
): Buffer {
  return Buffer.from(
    drahealthv1.NodeWatchResourcesResponse.encode({
      devices: devices.flatMap((d) =>
        deviceNames(d).map((deviceName) => ({
          device: { poolName, deviceName },
          health:
            d.health === 'Healthy' ? drahealthv1.HealthStatus.HEALTHY : drahealthv1.HealthStatus.UNHEALTHY,
          lastUpdatedTime: nowSeconds,
          healthCheckTimeoutSeconds,
          message: healthMessage(d.reason),
        })),
      ),
    }).finish(),
  );
}

/** The heartbeat interval for a health_check_timeout_seconds (0: the kubelet's default). */
export function healthHeartbeatMs(healthCheckTimeoutSeconds: number): number {
  const timeout =
    healthCheckTimeoutSeconds > 0 ? healthCheckTimeoutSeconds : KUBELET_DEFAULT_HEALTH_TIMEOUT_SECONDS;
  return Math.max(1000, Math.floor((timeout * 1000) / 3));
}

/** Both health services with one handler; the responses are pre-encoded bytes. */
export function healthServices(onWatch: (call: ServerWritableStream<unknown, Buffer>) => void): {
  v1: { definition: typeof drahealthv1.DRAResourceHealthService; impl: drahealthv1.DRAResourceHealthServer };
  v1alpha1: {
    definition: typeof drahealthv1alpha1.DRAResourceHealthService;
    impl: drahealthv1alpha1.DRAResourceHealthServer;
  };
} {
  const passthrough = (value: Buffer): Buffer => value;
  const v1 = {
    ...drahealthv1.DRAResourceHealthService,
    nodeWatchResources: {
      ...drahealthv1.DRAResourceHealthService.nodeWatchResources,
      responseSerialize: passthrough,
    },
  } as unknown as typeof drahealthv1.DRAResourceHealthService;
  const v1alpha1 = {
    ...drahealthv1alpha1.DRAResourceHealthService,
    nodeWatchResources: {
      ...drahealthv1alpha1.DRAResourceHealthService.nodeWatchResources,
      responseSerialize: passthrough,
    },
  } as unknown as typeof drahealthv1alpha1.DRAResourceHealthService;
  const handler = (call: unknown): void => onWatch(call as ServerWritableStream<unknown, Buffer>);
  return {
    v1: { definition: v1, impl: { nodeWatchResources: handler } },
    v1alpha1: { definition: v1alpha1, impl: { nodeWatchResources: handler } },
  };
}
