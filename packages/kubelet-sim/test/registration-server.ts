// A raw pluginregistration server on a socket in plugins_registry, for the tests of the kubelet's
// side of registration (what it asks with GetInfo, what it reports with NotifyRegistrationStatus).
import { rmSync } from 'node:fs';
import { Server, ServerCredentials, status } from '@grpc/grpc-js';
import { pluginregistration } from '@plugboard/proto';

/**
 * A pluginregistration server that records the status the kubelet reports; the first
 * `failGetInfo` GetInfo calls fail with UNAVAILABLE.
 */
export async function registrationServer(
  socket: string,
  info: pluginregistration.PluginInfo,
  failGetInfo = 0,
) {
  const statuses: pluginregistration.RegistrationStatus[] = [];
  let getInfoCalls = 0;
  const server = new Server();
  server.addService(pluginregistration.RegistrationService, {
    getInfo: (_call, cb) => {
      getInfoCalls++;
      if (getInfoCalls <= failGetInfo) cb({ code: status.UNAVAILABLE, details: 'not ready yet' }, null);
      else cb(null, info);
    },
    notifyRegistrationStatus: (call, cb) => {
      statuses.push(call.request);
      cb(null, {});
    },
  } satisfies pluginregistration.RegistrationServer);
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix://${socket}`, ServerCredentials.createInsecure(), (err) =>
      err ? reject(err) : resolve(),
    ),
  );
  return {
    statuses,
    getInfoCalls: () => getInfoCalls,
    stop: () => {
      server.forceShutdown();
      rmSync(socket, { force: true });
    },
  };
}
