// The device manager as the plugin watcher's handler for `DevicePlugin` sockets
// (pkg/kubelet/cm/devicemanager/plugin/v1beta1 handler.go, release-1.33): ValidatePlugin checks
// the supported versions and the resource name, RegisterPlugin dials the endpoint GetInfo named
// exactly as Register does, DeRegisterPlugin disconnects the plugin. Errors carry the kubelet's text.

import { isAbsolute } from 'node:path';
import { lstatSync } from 'node:fs';
import type { Logger } from 'pino';
import { DEVICE_PLUGIN_API_VERSION } from '@plugboard/proto';
import { KubeletSimError } from '../../../../errors.js';
import { isExtendedResourceName } from '@plugboard/topology';
import type { PluginHandler } from '../../../../pluginmanager/plugin-watcher.js';
import type { ClientHandler } from './server.js';

export class DevicePluginHandler implements PluginHandler {
  constructor(
    private readonly handler: ClientHandler,
    private readonly log: Logger,
  ) {}

  validatePlugin(name: string, _endpoint: string, versions: string[]): void {
    if (!versions.includes(DEVICE_PLUGIN_API_VERSION)) {
      throw new KubeletSimError(
        'RegistrationRejected',
        `manager version, ${DEVICE_PLUGIN_API_VERSION}, is not among plugin supported versions [${versions.join(' ')}]`,
      );
    }
    if (!isExtendedResourceName(name)) {
      throw new KubeletSimError(
        'RegistrationRejected',
        `invalid name of device plugin socket: the ResourceName "${name}" is invalid`,
      );
    }
  }

  async registerPlugin(name: string, endpoint: string, versions: string[]): Promise<void> {
    let isSocket = false;
    try {
      isSocket = isAbsolute(endpoint) && lstatSync(endpoint).isSocket();
    } catch {
      isSocket = false;
    }
    if (!isSocket)
      throw new KubeletSimError(
        'RegistrationRejected',
        `failed to dial device plugin: ${endpoint} is not a Unix socket`,
      );
    this.log.info({ resource: name, endpoint, versions }, 'registering plugin at endpoint (plugin watcher)');
    await this.handler.connectClient(name, endpoint, 'plugin-watcher');
  }

  deRegisterPlugin(name: string, endpoint: string): void {
    this.handler.disconnectClient(name, endpoint);
  }
}
