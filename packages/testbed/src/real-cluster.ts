// A node on the real local cluster, for a test. `npm test` starts one control plane for the whole
// run (scripts/test.mjs: `plugboard-cluster up --nodes 0`) and names its directory in
// PLUGBOARD_REAL_CLUSTER_DIR; each test file adds kubelets of its own (each in its own mount
// namespace, so its device-plugin directory is its own) and removes them when it ends. Node names
// are unique per test file, so files run side by side on one control plane.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClusterNode, CreateContainerRecord, KubectlResult, TestCluster } from './test-node.js';
import { waitFor } from './wait.js';
import {
  addNode,
  cachedBinaries,
  readState,
  removeNode,
  restartKubelet,
  runKubectl,
  startKubelet,
  stopKubelet,
  type Binaries,
  type ClusterState,
  type NodeState,
  type TopologyManagerPolicy,
  writeKubeconfig,
} from '@plugboard/local-cluster';

export const REAL_CLUSTER_ENV = 'PLUGBOARD_REAL_CLUSTER_DIR';

export interface RealCluster extends TestCluster {
  kind: 'real';
  dir: string;
  /** The cluster admin's kubeconfig. */
  kubeconfig: string;
  server: string;
  binaries: Binaries;
  /**
   * A new real kubelet on this cluster, named `<prefix>-<random>`. It reports node status every
   * second (upstream's default is 10 s) so that tests see capacity changes without long waits.
   */
  addNode(
    prefix: string,
    opts?: { topologyManagerPolicy?: TopologyManagerPolicy; nodeStatusUpdateFrequency?: string },
  ): Promise<RealNode>;
  /**
   * The real kubectl as a ServiceAccount: a token from the TokenRequest API (`kubectl create token`),
   * bound to a Pod when `boundPod` names one (as the kubelet's projected token of a pod is: the API
   * server then puts the pod's node into the token, `authentication.kubernetes.io/node-name`), in a
   * kubeconfig of its own under `dir` that holds the token and the cluster's CA and nothing else.
   */
  serviceAccount(
    namespace: string,
    name: string,
    opts: { dir: string; boundPod?: string },
  ): Promise<ServiceAccountClient>;
}

/** kubectl as a ServiceAccount (RealCluster.serviceAccount). */
export interface ServiceAccountClient {
  /** `system:serviceaccount:<namespace>:<name>`. */
  username: string;
  token: string;
  kubeconfig: string;
  kubectl(args: readonly string[], opts?: { input?: string }): Promise<KubectlResult>;
}

export interface RealNode extends ClusterNode {
  kind: 'real';
  /** The node's own kubeconfig (system:node:<name>). */
  kubeconfig: string;
  /** argv prefix running a process in the node's mount namespace (third-party plugins with fixed paths). */
  exec: string[];
}

export function realClusterDir(env: NodeJS.ProcessEnv = process.env): string {
  const dir = env[REAL_CLUSTER_ENV];
  if (!dir) {
    throw new Error(
      `${REAL_CLUSTER_ENV} is not set: this test runs on the real local cluster that \`npm test\` starts ` +
        '(it needs root and Go; see docs/LOCAL-CLUSTER.md). To run it alone: ' +
        'sudo npx plugboard-cluster up --nodes 0 --dir /tmp/pb-cluster --apiserver-port 0, then ' +
        `${REAL_CLUSTER_ENV}=/tmp/pb-cluster node --test …`,
    );
  }
  return dir;
}

function nodeHandle(cluster: RealCluster, bins: Binaries, state: ClusterState, node: NodeState): RealNode {
  return {
    kind: 'real',
    name: node.name,
    dir: node.dir,
    devicePluginDir: node.devicePluginDir,
    pluginsRegistryDir: node.pluginsRegistryDir,
    pluginsDir: node.pluginsDir,
    // The fake runtime takes CDI device names without reading the specs: any directory will do.
    cdiDir: join(node.dir, 'cdi'),
    podResourcesSocket: node.podResourcesSocket,
    kubeconfig: node.kubeconfig,
    // The real kubelet reads this machine's topology.
    sysfsRoot: '/sys',
    exec: node.exec,
    containers: () => {
      let text = '';
      try {
        text = readFileSync(node.containersRecord, 'utf8');
      } catch {
        return [];
      }
      return text
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => {
          const rec = JSON.parse(l) as CreateContainerRecord;
          // CRI v1 (1.37) carries an env value as bytes, which protojson writes in base64.
          for (const e of rec.request.config.envs ?? [])
            e.value = Buffer.from(e.value, 'base64').toString('utf8');
          return rec;
        });
    },
    restartKubelet: async () => {
      await restartKubelet(bins, state, node.name);
    },
    stopKubelet: () => stopKubelet(state, node.name),
    startKubelet: async () => {
      await startKubelet(bins, state, node.name);
    },
    remove: async () => {
      await removeNode(state, node.name);
      await cluster.kubectl(['delete', 'node', node.name, '--ignore-not-found', '--wait=false']);
    },
  };
}

/** The real cluster `npm test` started (PLUGBOARD_REAL_CLUSTER_DIR). */
export function realCluster(env: NodeJS.ProcessEnv = process.env): RealCluster {
  const dir = realClusterDir(env);
  const bins = cachedBinaries(env);
  if (!bins) throw new Error('the local cluster’s binaries are not built: run `npx plugboard-cluster build`');
  const state = readState(dir);
  const kubectlWith =
    (kubeconfig: string) =>
    (args: readonly string[], opts: { input?: string } = {}): Promise<KubectlResult> =>
      runKubectl(bins.kubectl, kubeconfig, args, opts);
  const kubectl = kubectlWith(state.kubeconfig);
  const cluster: RealCluster = {
    kind: 'real',
    dir,
    kubeconfig: state.kubeconfig,
    server: state.server,
    binaries: bins,
    kubectl,
    kubectlJson: async <T>(args: readonly string[]) =>
      JSON.parse((await kubectl([...args, '-o', 'json'])).stdout) as T,
    adminKubeconfig: () => state.kubeconfig,
    close: () => Promise.resolve(),
    addNode: async (prefix, opts = {}) => {
      const name = `${prefix}-${randomBytes(3).toString('hex')}`;
      const node = await addNode(bins, state, { name, nodeStatusUpdateFrequency: '1s', ...opts });
      return nodeHandle(cluster, bins, state, node);
    },
    namespace: async (prefix) => {
      const name = `${prefix}-${randomBytes(3).toString('hex')}`;
      await kubectl(['create', 'namespace', name]);
      // The namespace's default ServiceAccount comes from the controller manager, shortly after.
      await waitFor(`the default ServiceAccount of ${name}`, async () => {
        await kubectl(['get', 'serviceaccount', 'default', '-n', name]);
        return true;
      });
      return {
        name,
        remove: async () => void (await kubectl(['delete', 'namespace', name, '--wait=false'])),
      };
    },
    serviceAccount: async (namespace, name, opts) => {
      const bound: string[] = [];
      if (opts.boundPod) {
        const uid = (
          await kubectl(['get', 'pod', '-n', namespace, opts.boundPod, '-o', 'jsonpath={.metadata.uid}'])
        ).stdout;
        bound.push(
          '--bound-object-kind',
          'Pod',
          '--bound-object-name',
          opts.boundPod,
          '--bound-object-uid',
          uid,
        );
      }
      const token = (await kubectl(['create', 'token', name, '-n', namespace, ...bound])).stdout.trim();
      const username = `system:serviceaccount:${namespace}:${name}`;
      const kubeconfig = join(
        opts.dir,
        `${namespace}.${name}${opts.boundPod ? `.${opts.boundPod}` : ''}.kubeconfig`,
      );
      writeKubeconfig(kubeconfig, {
        server: state.server,
        pkiDir: state.pkiDir,
        name: 'plugboard-local',
        token,
        user: username,
      });
      return { username, token, kubeconfig, kubectl: kubectlWith(kubeconfig) };
    },
  };
  return cluster;
}
