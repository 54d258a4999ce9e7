// Plugboard's DRA drivers on a test bed's node, as the CLI starts them from a config: the node's
// plugin directories, the node's API server (admin kubeconfig), CDI specs under the bed's directory.
// The bed's close() stops them and then deletes the node's ResourceSlices.
import { join } from 'node:path';
import { removeDraObjects, type TestBed } from '@plugboard/testbed';
import {
  kubeApiFromKubeConfig,
  startDraDrivers,
  type DraRuntime,
  type PluginConfig,
} from '../../src/index.js';

export async function draOnBed(bed: TestBed, config: PluginConfig): Promise<DraRuntime> {
  const { cluster, node } = bed;
  bed.defer(() => removeDraObjects(cluster, node.name));
  const dra = await startDraDrivers(config, {
    nodeName: node.name,
    kube: await kubeApiFromKubeConfig({ kubeconfig: cluster.adminKubeconfig(node) }),
    pluginsDir: node.pluginsDir,
    pluginsRegistryDir: node.pluginsRegistryDir,
    cdiDir: join(bed.work, 'cdi'),
    faultTaints: true,
  });
  bed.defer(() => dra.stop());
  return dra;
}
