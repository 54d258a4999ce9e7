// The kubelet's side of one device-plugin connection (pkg/kubelet/cm/devicemanager/plugin/v1beta1
// client.go, release-1.33): Connect dials the plugin's socket and asks GetDevicePluginOptions (the
// options the kubelet keeps, not the ones in RegisterRequest); Run opens the one ListAndWatch
// stream and hands every message to the manager until the stream ends.

import { credentials, Metadata, type ClientReadableStream, type ServiceError } from '@grpc/grpc-js';
import { deviceplugin } from '@plugboard/proto';
import { KubeletSimError } from '../../../../errors.js';
import { goGrpcErrorText } from '../../../../util/grpc-errors.js';
import type { PluginOptions } from '../../types.js';

export interface PluginConnection {
  client: deviceplugin.DevicePluginClient;
  options: PluginOptions;
}

/** Dial, then GetDevicePluginOptions; the client is closed on failure. Throws the kubelet's error text. */
export async function connectPlugin(
  socketPath: string,
  dialTimeoutMs: number,
  rpcTimeoutMs: number,
): Promise<PluginConnection> {
  const client = new deviceplugin.DevicePluginClient(`unix://${socketPath}`, credentials.createInsecure());
  try {
    await new Promise<void>((resolve, reject) => {
      client.waitForReady(Date.now() + dialTimeoutMs, (err) =>
        err
          ? reject(
              new KubeletSimError('RegistrationRejected', `failed to dial device plugin: ${err.message}`),
            )
          : resolve(),
      );
    });
    const options = await new Promise<deviceplugin.DevicePluginOptions>((resolve, reject) => {
      client.getDevicePluginOptions(
        {},
        new Metadata(),
        { deadline: Date.now() + rpcTimeoutMs },
        (err, res) =>
          err
            ? reject(
                new KubeletSimError(
                  'RegistrationRejected',
                  `failed to get device plugin options: ${goGrpcErrorText(err)}`,
                ),
              )
            : resolve(res),
      );
    });
    return {
      client,
      options: {
        preStartRequired: options.preStartRequired,
        getPreferredAllocationAvailable: options.getPreferredAllocationAvailable,
      },
    };
  } catch (err) {
    client.close();
    throw err;
  }
}

/**
 * Run: opens ListAndWatch; each message goes to `onMessage` (PluginListAndWatchReceiver), the
 * stream's error or end to `onEnded` (which may hear both: the endpoint's `closed` flag guards it).
 */
export function runListAndWatch(
  client: deviceplugin.DevicePluginClient,
  onMessage: (msg: deviceplugin.ListAndWatchResponse) => void,
  onEnded: (err?: ServiceError) => void,
): ClientReadableStream<deviceplugin.ListAndWatchResponse> {
  const stream = client.listAndWatch({});
  stream.on('data', onMessage);
  stream.on('error', onEnded);
  stream.on('end', () => onEnded());
  return stream;
}
