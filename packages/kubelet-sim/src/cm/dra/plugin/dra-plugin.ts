// One registered plugin of a DRA driver as the kubelet calls it (pkg/kubelet/cm/dra/plugin
// dra_plugin.go, 1.37): a gRPC client for the DRAPlugin service version chosen at registration
// (v1 or v1beta1, the same messages), NodePrepareResources/NodeUnprepareResources with the kubelet's
// 45 s call timeout, and NodeWatchResources on the DRAResourceHealth version the driver advertises
// (v1 or v1alpha1). The channel is created once and connects on its own, as grpc.NewClient does.

import {
  credentials,
  Metadata,
  type ChannelCredentials,
  type ClientReadableStream,
  type ServiceError,
} from '@grpc/grpc-js';
import {
  DRA_PLUGIN_SERVICE_V1,
  DRA_RESOURCE_HEALTH_SERVICE_V1,
  drahealthv1,
  drahealthv1alpha1,
  drav1,
  drav1beta1,
} from '@plugboard/proto';

/** defaultClientCallTimeout. */
export const DEFAULT_CLIENT_CALL_TIMEOUT_MS = 45_000;

export type DraClaimRef = drav1.Claim;
export type PrepareResponse = drav1.NodePrepareResourcesResponse;
export type UnprepareResponse = drav1.NodeUnprepareResourcesResponse;
export type HealthResponse = drahealthv1.NodeWatchResourcesResponse;

type DraClient = drav1.DRAPluginClient | drav1beta1.DRAPluginClient;
type HealthClient = drahealthv1.DRAResourceHealthClient | drahealthv1alpha1.DRAResourceHealthClient;

const insecure: ChannelCredentials = credentials.createInsecure();

export class DRAPlugin {
  readonly client: DraClient;
  private readonly healthClient: HealthClient | null;

  constructor(
    readonly driverName: string,
    readonly endpoint: string,
    /** `v1.DRAPlugin` or `v1beta1.DRAPlugin`. */
    readonly chosenService: string,
    /** `v1.DRAResourceHealth`, `v1alpha1.DRAResourceHealth`, or null when the driver serves none. */
    readonly healthService: string | null,
    readonly clientCallTimeoutMs: number = DEFAULT_CLIENT_CALL_TIMEOUT_MS,
  ) {
    const target = `unix://${endpoint}`;
    this.client =
      chosenService === DRA_PLUGIN_SERVICE_V1
        ? new drav1.DRAPluginClient(target, insecure)
        : new drav1beta1.DRAPluginClient(target, insecure);
    // Both clients share the DRA client's channel: one connection per plugin, as upstream.
    const channelOverride = { channelOverride: this.client.getChannel() };
    this.healthClient =
      healthService === null
        ? null
        : healthService === DRA_RESOURCE_HEALTH_SERVICE_V1
          ? new drahealthv1.DRAResourceHealthClient(target, insecure, channelOverride)
          : new drahealthv1alpha1.DRAResourceHealthClient(target, insecure, channelOverride);
  }

  nodePrepareResources(claims: DraClaimRef[]): Promise<PrepareResponse> {
    return new Promise((resolve, reject) =>
      this.client.nodePrepareResources(
        { claims },
        new Metadata(),
        { deadline: Date.now() + this.clientCallTimeoutMs },
        (err: ServiceError | null, res: PrepareResponse) => (err ? reject(err) : resolve(res)),
      ),
    );
  }

  nodeUnprepareResources(claims: DraClaimRef[]): Promise<UnprepareResponse> {
    return new Promise((resolve, reject) =>
      this.client.nodeUnprepareResources(
        { claims },
        new Metadata(),
        { deadline: Date.now() + this.clientCallTimeoutMs },
        (err: ServiceError | null, res: UnprepareResponse) => (err ? reject(err) : resolve(res)),
      ),
    );
  }

  /** NodeWatchResources; null when the driver advertised no health service. */
  nodeWatchResources(): ClientReadableStream<HealthResponse> | null {
    if (!this.healthClient) return null;
    return this.healthClient.nodeWatchResources({});
  }

  close(): void {
    this.client.close();
  }
}
