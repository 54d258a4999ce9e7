// Per-claim CDI specs, as upstream's example driver writes them: one transient spec file per
// prepared claim (<cdi dir>/<vendor>-<class>_<claim UID>.json, the name CDI's
// GenerateTransientSpecName gives), with one CDI device per allocated device named
// `<claim UID>-<device>`, so a CDI device ID is never reused for another claim (a runtime that
// caches specs cannot resolve a stale one). NodePrepareResources returns the IDs in
// `vendor/class=name` form; NodeUnprepareResources removes the file.
import { unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../atomic-file.js';
import { CDI_VERSION, type CdiContainerEdits, type CdiSpec } from '../cdi.js';
import { PluginError } from '../errors.js';

export interface ClaimCdi {
  vendor: string;
  class: string;
  specDir: string;
}

/** The vendor part of CDI names when none is configured: `k8s.<driver>`, as the example driver does. */
export function defaultCdiVendor(driverName: string): string {
  return `k8s.${driverName}`;
}

export function claimSpecPath(cdi: ClaimCdi, claimUid: string): string {
  return join(cdi.specDir, `${cdi.vendor}-${cdi.class}_${claimUid.replaceAll('/', '_')}.json`);
}

export function cdiDeviceName(claimUid: string, deviceName: string): string {
  return `${claimUid}-${deviceName}`;
}

export function cdiDeviceId(cdi: ClaimCdi, claimUid: string, deviceName: string): string {
  return `${cdi.vendor}/${cdi.class}=${cdiDeviceName(claimUid, deviceName)}`;
}

export async function writeClaimSpec(
  cdi: ClaimCdi,
  claimUid: string,
  devices: readonly { deviceName: string; edits: CdiContainerEdits }[],
): Promise<void> {
  const spec: CdiSpec = {
    cdiVersion: CDI_VERSION,
    kind: `${cdi.vendor}/${cdi.class}`,
    devices: devices.map((d) => ({ name: cdiDeviceName(claimUid, d.deviceName), containerEdits: d.edits })),
  };
  const path = claimSpecPath(cdi, claimUid);
  try {
    await writeFileAtomic(path, JSON.stringify(spec, null, 2) + '\n');
  } catch (err) {
    throw new PluginError('internal', `cannot write CDI spec ${path}: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

/** Removes the claim's CDI spec (already gone: done). A promise, though the removal is synchronous. */
export function removeClaimSpec(cdi: ClaimCdi, claimUid: string): Promise<void> {
  const path = claimSpecPath(cdi, claimUid);
  try {
    // unlink on this thread, not rm: rm's lstat and rimraf steps through the thread pool cost more
    // than the removal itself (see atomic-file.ts).
    unlinkSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      return Promise.reject(
        new PluginError('internal', `cannot remove CDI spec ${path}: ${(err as Error).message}`, {
          cause: err,
        }),
      );
    }
  }
  return Promise.resolve();
}
