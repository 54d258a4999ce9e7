// A simulated node for a test: kubelet-sim (kubelet + API slice + scheduler + controllers) in this
// process, its sockets and state in `<root>/<name>`, in the TestNode shape a real node has too.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { startKubeletSim, type KubeletSim, type KubeletSimOptions } from '@plugboard/kubelet-sim';
import type { TestNode } from './test-node.js';

export interface SimNode extends TestNode {
  kind: 'sim';
  /** The kubelet-sim itself: admitPod, deletePod, restart, state, its API server's url. */
  sim: KubeletSim;
}

export interface SimNodeOptions {
  /** kubelet-sim options beyond the node's paths (cpus, numaNodes, policies, podProxyTargets, …). */
  sim?: Partial<KubeletSimOptions>;
}

/** Starts kubelet-sim for node `name` in `<root>/<name>` (created); `remove()` stops it. */
export async function simNode(root: string, name: string, options: SimNodeOptions = {}): Promise<SimNode> {
  const dir = join(root, name);
  const paths = {
    devicePluginDir: join(dir, 'device-plugins'),
    pluginsDir: join(dir, 'plugins'),
    pluginsRegistryDir: join(dir, 'plugins_registry'),
    cdiDir: join(dir, 'cdi'),
  };
  const stateDir = join(dir, 'kubelet');
  for (const d of [...Object.values(paths), stateDir]) mkdirSync(d, { recursive: true });
  const sim = await startKubeletSim({
    devicePluginDir: paths.devicePluginDir,
    pluginsRegistryDir: paths.pluginsRegistryDir,
    stateDir,
    nodeName: name,
    logger: pino({ level: 'silent' }),
    ...options.sim,
  });
  return {
    kind: 'sim',
    name: sim.nodeName,
    dir,
    ...paths,
    devicePluginDir: sim.devicePluginDir,
    pluginsRegistryDir: options.sim?.pluginsRegistryDir ?? paths.pluginsRegistryDir,
    podResourcesSocket: sim.podResourcesSocket,
    kubeconfig: sim.kubeconfigPath,
    sysfsRoot: sim.sysfsRoot,
    sim,
    remove: () => sim.stop(),
  };
}
