// What a DRA suite leaves on a cluster when it ends: the ResourceSlices its driver published for the
// node (a stopped driver's stay until someone deletes them) and the DeviceClass it created.
import type { TestCluster } from './test-node.js';

/**
 * Deletes `nodeName`'s ResourceSlices and, when named, `deviceClass` — without waiting, and ignoring
 * errors (it runs in `after`, whatever the suite reached; any argument may still be unset).
 */
export async function removeDraObjects(
  cluster: TestCluster | undefined,
  nodeName: string | undefined,
  opts: { deviceClass?: string } = {},
): Promise<void> {
  if (!cluster || !nodeName) return;
  await cluster
    .kubectl(['delete', 'resourceslices', '--field-selector', `spec.nodeName=${nodeName}`, '--wait=false'])
    .catch(() => undefined);
  if (opts.deviceClass) {
    await cluster
      .kubectl(['delete', 'deviceclass', opts.deviceClass, '--ignore-not-found', '--wait=false'])
      .catch(() => undefined);
  }
}
