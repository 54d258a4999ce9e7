// What a running local cluster is made of, kept in DIR/cluster.json (the control plane) and
// DIR/nodes/<name>/node.json (each node) so that `down` and `status` (another process, later) find
// every process, directory and port that `up` made. One file per node: test processes add and
// remove nodes of one cluster at the same time without writing over each other.
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LocalClusterError } from './errors.js';
import type { ProcessRecord } from './processes.js';

/** The hard-coded device-plugin directory of every kubelet (pluginapi.KubeletSocket's directory). */
export const HOST_DEVICE_PLUGIN_DIR = '/var/lib/kubelet/device-plugins';

export interface NodeState {
  name: string;
  /** DIR/nodes/<name>: everything of this node. */
  dir: string;
  /** Whether the kubelet sees its own directory at HOST_DEVICE_PLUGIN_DIR (a bind mount in its mount namespace). */
  isolated: boolean;
  /** Where this kubelet's device-plugin directory is, as seen from outside its mount namespace. */
  devicePluginDir: string;
  rootDir: string;
  pluginsRegistryDir: string;
  pluginsDir: string;
  podResourcesSocket: string;
  kubeconfig: string;
  runtimeSocket: string;
  /** The fake runtime's record: one JSON line per CreateContainer request. */
  containersRecord: string;
  kubeletConfig: string;
  port: number;
  healthzPort: number;
  /** argv prefix that runs a process in this node's mount namespace ([] when not isolated). */
  exec: string[];
  /** The process holding the node's mount namespace. */
  namespace: ProcessRecord;
  runtime: ProcessRecord;
  kubelet: ProcessRecord;
}

export interface ClusterState {
  version: string;
  dir: string;
  server: string;
  nodeIP: string;
  pkiDir: string;
  kubeconfig: string;
  ports: {
    apiserver: number;
    etcdClient: number;
    etcdPeer: number;
    controllerManager: number;
    scheduler: number;
  };
  /** etcd, kube-apiserver, kube-controller-manager, kube-scheduler, in start order. */
  controlPlane: ProcessRecord[];
  nodes: NodeState[];
}

/** What `up` prints (one JSON line) and what tests and the demo read. */
export interface ClusterInfo {
  version: string;
  server: string;
  kubeconfig: string;
  dir: string;
  nodes: {
    name: string;
    devicePluginDir: string;
    pluginsRegistryDir: string;
    pluginsDir: string;
    podResourcesSocket: string;
    kubeconfig: string;
    exec: string[];
    containersRecord: string;
  }[];
}

export function clusterInfo(s: ClusterState): ClusterInfo {
  return {
    version: s.version,
    server: s.server,
    kubeconfig: s.kubeconfig,
    dir: s.dir,
    nodes: s.nodes.map((n) => ({
      name: n.name,
      devicePluginDir: n.devicePluginDir,
      pluginsRegistryDir: n.pluginsRegistryDir,
      pluginsDir: n.pluginsDir,
      podResourcesSocket: n.podResourcesSocket,
      kubeconfig: n.kubeconfig,
      exec: n.exec,
      containersRecord: n.containersRecord,
    })),
  };
}

export const stateFile = (dir: string): string => join(dir, 'cluster.json');

const nodeFile = (dir: string, name: string): string => join(dir, 'nodes', name, 'node.json');

function writeJson(file: string, value: unknown): void {
  writeFileSync(`${file}.tmp-${process.pid}`, `${JSON.stringify(value, null, 2)}\n`);
  renameSync(`${file}.tmp-${process.pid}`, file);
}

export function readState(dir: string): ClusterState {
  const file = stateFile(dir);
  if (!existsSync(file)) {
    throw new LocalClusterError(
      'not-a-cluster',
      `${dir} holds no local cluster (no cluster.json): was it started with plugboard-cluster up --dir ${dir}?`,
    );
  }
  const state = JSON.parse(readFileSync(file, 'utf8')) as ClusterState;
  const nodesDir = join(dir, 'nodes');
  const names = existsSync(nodesDir) ? readdirSync(nodesDir).filter((n) => existsSync(nodeFile(dir, n))) : [];
  const nodes = names.map(
    (n) => JSON.parse(readFileSync(nodeFile(dir, n), 'utf8')) as NodeState & { order?: number },
  );
  state.nodes = nodes.sort((a, b) => (a.order ?? 0) - (b.order ?? 0));
  return state;
}

/** Writes the control plane's part (nodes have files of their own: writeNode). */
export function writeState(state: ClusterState): void {
  writeJson(stateFile(state.dir), { ...state, nodes: [] });
}

export function writeNode(state: ClusterState, node: NodeState): void {
  writeJson(nodeFile(state.dir, node.name), { ...node, order: Date.now() });
}

export function forgetNode(state: ClusterState, name: string): void {
  rmSync(nodeFile(state.dir, name), { force: true });
}
