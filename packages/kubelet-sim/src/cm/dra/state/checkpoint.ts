// The DRA manager's checkpoint (pkg/kubelet/cm/dra/state checkpoint.go and checkpointer.go, 1.37):
// `dra_manager_state` in the kubelet's root directory, `{"Data": "<json>", "Checksum": <crc32>}`
// where Data is the CheckpointData JSON (TypeMeta `checkpoint.dra.kubelet.k8s.io/v1`
// `DRACheckpoint`, then Entries) and Checksum its CRC-32 (IEEE). Written the way Go's encoding/json
// writes it, so a real kubelet reads the simulator's file and the other way round.

import { crc32 } from 'node:zlib';
import type { CheckpointManager } from '../../../checkpointmanager/checkpoint-manager.js';
import { GoMap, goJson } from '../../../util/go-json.js';
import type { ClaimInfoState, DeviceState } from './state.js';

export const DRA_MANAGER_STATE_FILE = 'dra_manager_state';
export const CHECKPOINT_API_VERSION = 'checkpoint.dra.kubelet.k8s.io/v1';
export const CHECKPOINT_KIND = 'DRACheckpoint';

interface GoDevice {
  PoolName: string;
  DeviceName: string;
  ShareID: string | null;
  RequestNames: string[] | null;
  CDIDeviceIDs: string[] | null;
}

interface GoClaimInfoState {
  ClaimUID: string;
  ClaimName: string;
  Namespace: string;
  PodUIDs: Record<string, unknown> | null;
  DriverState: Record<string, { Devices: GoDevice[] | null }> | null;
}

/** An empty Go slice decoded from protobuf is nil: written as null. */
const slice = (xs: string[]) => (xs.length ? xs : null);

function toGo(entry: ClaimInfoState): Record<string, unknown> {
  return {
    ClaimUID: entry.claimUid,
    ClaimName: entry.claimName,
    Namespace: entry.namespace,
    PodUIDs: new GoMap(Object.fromEntries([...entry.podUids].map((uid) => [uid, {}]))),
    DriverState: new GoMap(
      Object.fromEntries(
        [...entry.driverState].map(([driver, state]) => [
          driver,
          {
            Devices: state.devices.length
              ? state.devices.map((d) => ({
                  PoolName: d.poolName,
                  DeviceName: d.deviceName,
                  ShareID: d.shareId,
                  RequestNames: slice(d.requestNames),
                  CDIDeviceIDs: slice(d.cdiDeviceIds),
                }))
              : null,
          },
        ]),
      ),
    ),
  };
}

function fromGo(entry: GoClaimInfoState): ClaimInfoState {
  return {
    claimUid: entry.ClaimUID,
    claimName: entry.ClaimName,
    namespace: entry.Namespace,
    podUids: new Set(Object.keys(entry.PodUIDs ?? {})),
    driverState: new Map(
      Object.entries(entry.DriverState ?? {}).map(([driver, state]) => [
        driver,
        {
          devices: (state.Devices ?? []).map((d): DeviceState => ({
            poolName: d.PoolName,
            deviceName: d.DeviceName,
            shareId: d.ShareID ?? null,
            requestNames: d.RequestNames ?? [],
            cdiDeviceIds: d.CDIDeviceIDs ?? [],
          })),
        },
      ]),
    ),
  };
}

/** One entry's JSON (a ClaimInfoState as encoding/json writes it). */
export function entryJson(entry: ClaimInfoState): string {
  return goJson(toGo(entry));
}

/** The checkpoint file's content from entries already encoded (entryJson), null for a nil list. */
export function marshalEncodedCheckpoint(entries: string[] | null): string {
  const data = `{"kind":"${CHECKPOINT_KIND}","apiVersion":"${CHECKPOINT_API_VERSION}","Entries":${
    entries === null ? 'null' : `[${entries.join(',')}]`
  }}`;
  return goJson({ Data: data, Checksum: crc32(Buffer.from(data, 'utf8')) });
}

/**
 * The checkpoint file's content for these entries (in the order given); null is the nil list a
 * fresh checkpoint holds (NewCheckpoint(nil)), `[]` what syncToCheckpoint writes once emptied.
 */
export function marshalCheckpoint(entries: ClaimInfoState[] | null): string {
  return marshalEncodedCheckpoint(entries === null ? null : entries.map(entryJson));
}

/** Reads a checkpoint back; throws on a checksum mismatch (the kubelet's CorruptCheckpointError). */
export function unmarshalCheckpoint(blob: string): ClaimInfoState[] {
  const cp = JSON.parse(blob) as { Data?: unknown; Checksum?: unknown };
  if (typeof cp.Data !== 'string' || typeof cp.Checksum !== 'number')
    throw new Error('checkpoint is corrupted: missing Data or Checksum');
  const expected = crc32(Buffer.from(cp.Data, 'utf8'));
  if (expected !== cp.Checksum)
    throw new Error(`checkpoint is corrupted: checksum ${cp.Checksum}, expected ${expected}`);
  // `ClaimInfoStateList` is what kubelets before the Entries rename wrote.
  const data = JSON.parse(cp.Data) as {
    Entries?: GoClaimInfoState[] | null;
    ClaimInfoStateList?: GoClaimInfoState[] | null;
  };
  return (data.Entries ?? data.ClaimInfoStateList ?? []).map(fromGo);
}

/** checkpointer.go: GetOrCreate and Store over the kubelet's checkpoint manager. */
export class DraCheckpointer {
  constructor(private readonly manager: CheckpointManager) {}

  async getOrCreate(): Promise<ClaimInfoState[]> {
    const blob = await this.manager.getCheckpoint(DRA_MANAGER_STATE_FILE);
    if (blob === null) {
      await this.store(null);
      return [];
    }
    return unmarshalCheckpoint(blob);
  }

  async store(entries: ClaimInfoState[] | null): Promise<void> {
    await this.manager.createCheckpoint(DRA_MANAGER_STATE_FILE, marshalCheckpoint(entries));
  }

  /** Store with entries already encoded (the claim info cache keeps each entry's JSON). */
  async storeEncoded(entries: string[]): Promise<void> {
    await this.manager.createCheckpoint(DRA_MANAGER_STATE_FILE, marshalEncodedCheckpoint(entries));
  }
}
