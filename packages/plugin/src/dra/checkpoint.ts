// The driver's record of prepared claims, kept in its data directory (<plugins>/<driver>/
// checkpoint.json) so that NodePrepareResources stays idempotent across restarts of the driver
// and NodeUnprepareResources can undo a preparation made by an earlier process (the kubelet
// passes only the claim's identity, and the claim may be gone by then). Written atomically with
// fsync, with a checksum like the kubelet's own checkpoints: a torn or edited file is refused
// with the reason rather than silently dropping what was prepared.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '../atomic-file.js';
import { PluginError } from '../errors.js';

export const CHECKPOINT_FILE = 'checkpoint.json';
const KIND = 'PlugboardDRACheckpoint';
const VERSION = 1;

export interface PreparedDevice {
  /** Requests of the claim this device serves (subrequest names stripped). */
  requestNames: string[];
  poolName: string;
  /** The device's name in the ResourceSlice. */
  deviceName: string;
  /** The device source's ID. */
  deviceId: string;
  cdiDeviceIds: string[];
  /** The allocation's share ID of a device that takes multiple allocations. */
  shareId?: string;
}

export interface PreparedClaim {
  uid: string;
  namespace: string;
  name: string;
  devices: PreparedDevice[];
  preparedAt: string;
}

interface CheckpointFile {
  kind: string;
  version: number;
  driver: string;
  checksum: string;
  preparedClaims: Record<string, PreparedClaim>;
}

function checksum(claims: Record<string, PreparedClaim>): string {
  return createHash('sha256').update(JSON.stringify(claims)).digest('hex');
}

/** Prepared claims by UID, as last written; a missing file is an empty checkpoint. */
export async function readCheckpoint(path: string, driver: string): Promise<Map<string, PreparedClaim>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
    throw new PluginError('internal', `cannot read checkpoint ${path}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const refuse = (why: string, cause?: unknown): never => {
    throw new PluginError(
      'internal',
      `checkpoint ${path} ${why}; move it away to start without it (the claims it records as prepared are then forgotten)`,
      { cause },
    );
  };
  let file: CheckpointFile;
  try {
    file = JSON.parse(text) as CheckpointFile;
  } catch (err) {
    return refuse('is not valid JSON', err);
  }
  if (file.kind !== KIND || file.version !== VERSION) refuse(`is not a version ${VERSION} ${KIND}`);
  if (file.driver !== driver) refuse(`belongs to driver "${file.driver}", not "${driver}"`);
  if (typeof file.preparedClaims !== 'object' || file.preparedClaims === null)
    refuse('has no preparedClaims');
  if (checksum(file.preparedClaims) !== file.checksum) refuse('is corrupt (checksum mismatch)');
  return new Map(Object.entries(file.preparedClaims));
}

export async function writeCheckpoint(
  path: string,
  driver: string,
  claims: ReadonlyMap<string, PreparedClaim>,
): Promise<void> {
  const preparedClaims = Object.fromEntries(claims);
  const file: CheckpointFile = {
    kind: KIND,
    version: VERSION,
    driver,
    checksum: checksum(preparedClaims),
    preparedClaims,
  };
  try {
    await writeFileAtomic(path, JSON.stringify(file, null, 2) + '\n', { mode: 0o600, fsync: true });
  } catch (err) {
    throw new PluginError('internal', `cannot write checkpoint ${path}: ${(err as Error).message}`, {
      cause: err,
    });
  }
}
