// One endpoint per registered resource (pkg/kubelet/cm/devicemanager/endpoint.go, release-1.33):
// the plugin's client and ListAndWatch stream, the options its GetDevicePluginOptions answered,
// the stop time that starts the grace period, and the RPCs the kubelet makes during admission and
// container start (GetPreferredAllocation, Allocate, PreStartContainer). A stopped endpoint
// (newStoppedEndpointImpl) stands for a resource restored from the checkpoint with no plugin yet.

import { Metadata, type ClientReadableStream } from '@grpc/grpc-js';
import type { deviceplugin } from '@plugboard/proto';
import { goGrpcErrorText } from '../../util/grpc-errors.js';
import type { PluginOptions, RegisteredVia, ResourceView } from './types.js';

export interface EndpointConnection {
  socketPath: string;
  client: deviceplugin.DevicePluginClient;
  options: PluginOptions;
  via: RegisteredVia;
}

export class Endpoint {
  readonly resource: string;
  /** The plugin's socket path (absolute), null for a stopped endpoint from the checkpoint. */
  readonly socketPath: string | null;
  /** Options from GetDevicePluginOptions; null for a stopped endpoint from the checkpoint. */
  readonly options: PluginOptions | null;
  readonly registeredAt: Date | null;
  readonly registeredVia: RegisteredVia | null;
  stream: ClientReadableStream<deviceplugin.ListAndWatchResponse> | null = null;
  /** When the plugin's stream ended (or the kubelet restarted); the grace period runs from here. */
  stoppedAt: Date | null = null;
  /** Set when the kubelet itself closes the client, so the stream's end is not a disconnect. */
  closed: boolean;
  private readonly client: deviceplugin.DevicePluginClient | null;
  private graceTimer: NodeJS.Timeout | null = null;

  constructor(
    resource: string,
    connection: EndpointConnection | null,
    private readonly rpcTimeoutMs: number,
  ) {
    this.resource = resource;
    this.socketPath = connection?.socketPath ?? null;
    this.client = connection?.client ?? null;
    this.options = connection?.options ?? null;
    this.registeredVia = connection?.via ?? null;
    this.registeredAt = connection ? new Date() : null;
    this.closed = connection === null;
  }

  /** True while the plugin is connected and its stream is open. */
  get connected(): boolean {
    return !this.closed && this.stoppedAt === null;
  }

  /** setStopTime: the plugin is gone; `onExpired` runs when the grace period is over. */
  setStopTime(stoppedAt: Date, gracePeriodMs: number, onExpired: () => void): void {
    this.stoppedAt = stoppedAt;
    this.clearGraceTimer();
    this.graceTimer = setTimeout(onExpired, gracePeriodMs);
    this.graceTimer.unref();
  }

  clearGraceTimer(): void {
    if (this.graceTimer) clearTimeout(this.graceTimer);
    this.graceTimer = null;
  }

  /** The plugin ended its ListAndWatch stream: close the client (the stream is already over). */
  streamEnded(): void {
    if (this.closed) return;
    this.closed = true;
    this.client?.close();
  }

  /** Cancels the ListAndWatch stream and closes the client (the kubelet's own doing). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.stream?.cancel();
    this.client?.close();
  }

  async allocate(devicesIds: string[]): Promise<deviceplugin.AllocateResponse> {
    const client = this.liveClient();
    return new Promise<deviceplugin.AllocateResponse>((resolve, reject) => {
      client.allocate({ containerRequests: [{ devicesIds }] }, new Metadata(), this.deadline(), (err, res) =>
        err ? reject(new Error(goGrpcErrorText(err))) : resolve(res),
      );
    });
  }

  async getPreferredAllocation(available: string[], mustInclude: string[], size: number): Promise<string[]> {
    const client = this.liveClient();
    const resp = await new Promise<deviceplugin.PreferredAllocationResponse>((resolve, reject) => {
      client.getPreferredAllocation(
        {
          containerRequests: [
            { availableDeviceIDs: available, mustIncludeDeviceIDs: mustInclude, allocationSize: size },
          ],
        },
        new Metadata(),
        this.deadline(),
        (err, res) =>
          err
            ? reject(
                new Error(
                  `device plugin GetPreferredAllocation rpc failed with err: ${goGrpcErrorText(err)}`,
                ),
              )
            : resolve(res),
      );
    });
    return resp.containerResponses[0]?.deviceIDs ?? [];
  }

  async preStartContainer(devicesIds: string[]): Promise<void> {
    const client = this.liveClient();
    await new Promise<void>((resolve, reject) => {
      client.preStartContainer({ devicesIds }, new Metadata(), this.deadline(), (err) =>
        err
          ? reject(new Error(`device plugin PreStartContainer rpc failed with err: ${goGrpcErrorText(err)}`))
          : resolve(),
      );
    });
  }

  private liveClient(): deviceplugin.DevicePluginClient {
    if (!this.client || this.closed || this.stoppedAt)
      throw new Error(`endpoint ${this.resource} has been stopped`);
    return this.client;
  }

  private deadline(): { deadline: number } {
    return { deadline: Date.now() + this.rpcTimeoutMs };
  }
}

/** The endpoint's part of a resource's view (a resource without an endpoint has none of it). */
export function endpointView(
  ep: Endpoint | undefined,
  gracePeriodMs: number,
): Pick<
  ResourceView,
  | 'registered'
  | 'endpoint'
  | 'options'
  | 'registeredAt'
  | 'registeredVia'
  | 'disconnectedAt'
  | 'graceExpiresAt'
> {
  return {
    registered: ep?.connected ?? false,
    endpoint: ep?.socketPath ?? null,
    options: ep?.options ? { ...ep.options } : null,
    registeredAt: ep?.registeredAt?.toISOString() ?? null,
    registeredVia: ep?.registeredVia ?? null,
    disconnectedAt: ep?.stoppedAt?.toISOString() ?? null,
    graceExpiresAt: ep?.stoppedAt ? new Date(ep.stoppedAt.getTime() + gracePeriodMs).toISOString() : null,
  };
}
