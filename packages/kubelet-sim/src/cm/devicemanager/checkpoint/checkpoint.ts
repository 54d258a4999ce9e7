// The device manager's checkpoint (pkg/kubelet/cm/devicemanager/checkpoint, release-1.33):
// `kubelet_internal_checkpoint` in the device-plugin directory, laid out like the kubelet's v2
// checkpoint (PodDeviceEntries with device IDs per NUMA node and the Allocate response,
// RegisteredDevices). It is the only state a restart keeps.

import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { deviceplugin, KUBELET_CHECKPOINT_FILE } from '@plugboard/proto';

export const CHECKPOINT_FILE = KUBELET_CHECKPOINT_FILE;

export interface CheckpointEntry {
  podUid: string;
  container: string;
  resource: string;
  /** Device IDs keyed by NUMA node ID ("-1" for none). */
  byNuma: Record<string, string[]>;
  response: deviceplugin.ContainerAllocateResponse;
}

export interface CheckpointData {
  podDevices: CheckpointEntry[];
  registeredDevices: Record<string, string[]>;
}

interface CheckpointFile {
  Data: {
    PodDeviceEntries: {
      PodUID: string;
      ContainerName: string;
      ResourceName: string;
      DeviceIDs: Record<string, string[]>;
      AllocResp: string;
    }[];
    RegisteredDevices: Record<string, string[]>;
  };
  Checksum: number;
}

/** FNV-1a (32 bit) over the Data JSON; the kubelet hashes its Go structure instead. */
function checksum(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

export function writeCheckpoint(dir: string, data: CheckpointData): void {
  const Data: CheckpointFile['Data'] = {
    PodDeviceEntries: data.podDevices.map((e) => ({
      PodUID: e.podUid,
      ContainerName: e.container,
      ResourceName: e.resource,
      DeviceIDs: e.byNuma,
      AllocResp: Buffer.from(deviceplugin.ContainerAllocateResponse.encode(e.response).finish()).toString(
        'base64',
      ),
    })),
    RegisteredDevices: data.registeredDevices,
  };
  const file: CheckpointFile = { Data, Checksum: checksum(JSON.stringify(Data)) };
  const path = join(dir, CHECKPOINT_FILE);
  writeFileSync(`${path}.tmp`, JSON.stringify(file), { mode: 0o600 });
  renameSync(`${path}.tmp`, path);
}

/** Missing or corrupt checkpoints are logged and ignored, as the kubelet continues without one. */
export function readCheckpoint(dir: string, log: Logger): CheckpointData | null {
  const path = join(dir, CHECKPOINT_FILE);
  let file: CheckpointFile;
  try {
    file = JSON.parse(readFileSync(path, 'utf8')) as CheckpointFile;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      log.error({ path, err: String(err) }, 'failed to read checkpoint file');
    return null;
  }
  if (!file?.Data || checksum(JSON.stringify(file.Data)) !== file.Checksum) {
    log.error({ path }, 'checkpoint is corrupted; continuing without device allocation info');
    return null;
  }
  return {
    podDevices: (file.Data.PodDeviceEntries ?? []).map((e) => ({
      podUid: e.PodUID,
      container: e.ContainerName,
      resource: e.ResourceName,
      byNuma: e.DeviceIDs,
      response: deviceplugin.ContainerAllocateResponse.decode(Buffer.from(e.AllocResp, 'base64')),
    })),
    registeredDevices: file.Data.RegisteredDevices ?? {},
  };
}
