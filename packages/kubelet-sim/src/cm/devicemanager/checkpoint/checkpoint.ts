// The device manager's checkpoint (pkg/kubelet/cm/devicemanager/checkpoint, release-1.33):
// `kubelet_internal_checkpoint` in the device-plugin directory, laid out like the kubelet's v2
// checkpoint (PodDeviceEntries with device IDs per NUMA node and the Allocate response,
// RegisteredDevices). It is the only state a restart keeps.

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

/** MarshalCheckpoint: the file's content, with its checksum. */
export function marshalCheckpoint(data: CheckpointData): string {
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
  return JSON.stringify(file);
}

export class CorruptCheckpointError extends Error {
  override readonly name = 'CorruptCheckpointError';
}

/** UnmarshalCheckpoint + VerifyChecksum; throws CorruptCheckpointError on a checksum mismatch. */
export function unmarshalCheckpoint(text: string): CheckpointData {
  const file = JSON.parse(text) as CheckpointFile;
  if (!file?.Data || checksum(JSON.stringify(file.Data)) !== file.Checksum) {
    throw new CorruptCheckpointError('checkpoint is corrupted');
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

/** readCheckpoint: a missing or corrupt checkpoint is logged and ignored; the kubelet goes on without one. */
export async function readCheckpoint(
  source: { read(): Promise<string | null> },
  log: Logger,
): Promise<CheckpointData | null> {
  try {
    const text = await source.read();
    return text === null ? null : unmarshalCheckpoint(text);
  } catch (err) {
    if (err instanceof CorruptCheckpointError)
      log.error(
        { checkpoint: CHECKPOINT_FILE },
        'checkpoint is corrupted; continuing without device allocation info',
      );
    else log.error({ checkpoint: CHECKPOINT_FILE, err: String(err) }, 'failed to read checkpoint file');
    return null;
  }
}
