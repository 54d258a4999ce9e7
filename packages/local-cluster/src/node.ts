// One node of the local cluster: upstream's fake container runtime, a mount namespace of its own,
// and a real kubelet inside it.
//
// Every kubelet serves /var/lib/kubelet/device-plugins (a compile-time constant), so two on one
// machine would collide there. Each node's kubelet runs in a private mount namespace, held by a
// small process (`unshare --mount --propagation private`, then `sleep`): for an isolated node its
// own directory is bind-mounted over /var/lib/kubelet/device-plugins inside it; the first node sees
// the host's. The namespace also keeps the kubelet's own mounts (its root dir, made rshared, and
// each pod's volumes) off the host: they go when the namespace goes. A restarted kubelet enters the
// same namespace, and so can a third-party device plugin with a hard-coded path (`exec`).
import { mkdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UNIX_SOCKET_PATH_MAX_BYTES } from '@plugboard/proto';
import { stringify } from 'yaml';
import { apiClient } from './api-client.js';
import type { Binaries } from './binaries.js';
import { kubeletConfiguration, type TopologyManagerPolicy } from './kubelet-config.js';
import { writeClientCert, writeKubeconfig } from './pki.js';
import { freePort } from './ports.js';
import { startDaemon, stopProcess, waitUntil, type ProcessRecord } from './processes.js';
import { HOST_DEVICE_PLUGIN_DIR, type ClusterState, type NodeState } from './state.js';

export interface NodeSpec {
  name: string;
  /** Bind-mount a directory of its own over /var/lib/kubelet/device-plugins (every node but the first). */
  isolated: boolean;
  topologyManagerPolicy?: TopologyManagerPolicy;
  nodeStatusUpdateFrequency?: string;
}

const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export function validNodeName(name: string): boolean {
  return name.length <= 63 && NAME.test(name);
}

/**
 * The room kept for a DRA driver's name in a node's sockets: the kubelet dials
 * `plugins_registry/<driver>-reg.sock` and `plugins/<driver>/dra.sock` under its root directory, and
 * a Unix socket address holds UNIX_SOCKET_PATH_MAX_BYTES. 21 bytes fit Plugboard's driver
 * (`gpu.plugboard.example`), dra-example-driver's (`gpu.example.com`) and NVIDIA's (`gpu.nvidia.com`).
 */
export const DRIVER_NAME_ROOM_BYTES = 21;
/** The node name length `up` assumes for nodes added later, like the test bed's `dra-1a2b3c`. */
export const NODE_NAME_ROOM_BYTES = 10;

/**
 * Why a node named `nodeName` in the cluster directory `clusterDir` could not serve its sockets —
 * the longest (a DRA driver's registration socket, with DRIVER_NAME_ROOM_BYTES for the driver's
 * name) would not fit a Unix socket address — or null when it can. Checked before anything starts,
 * so that a long `--dir` is refused by name instead of a driver failing to register later.
 */
export function nodeSocketPathProblem(clusterDir: string, nodeName: string): string | null {
  const registry = join(clusterDir, 'nodes', nodeName, 'kubelet', 'plugins_registry');
  const longest = join(registry, `${'d'.repeat(DRIVER_NAME_ROOM_BYTES)}-reg.sock`);
  const bytes = Buffer.byteLength(longest);
  if (bytes <= UNIX_SOCKET_PATH_MAX_BYTES) return null;
  const room = UNIX_SOCKET_PATH_MAX_BYTES - Buffer.byteLength(join(registry, '-reg.sock'));
  return (
    `--dir ${clusterDir} is too long for node ${nodeName}'s sockets: a DRA driver registers at ` +
    `${registry}/<driver>-reg.sock and a Unix socket address holds ${UNIX_SOCKET_PATH_MAX_BYTES} bytes, ` +
    `which leaves ${Math.max(room, 0)} bytes for the driver's name (${DRIVER_NAME_ROOM_BYTES} needed): ` +
    `use a shorter --dir, e.g. one made by mktemp -d /tmp/pb-XXXXXX`
  );
}

function mountNamespaceReady(pid: number, isolated: boolean): boolean {
  try {
    if (readlinkSync(`/proc/${pid}/ns/mnt`) === readlinkSync('/proc/self/ns/mnt')) return false;
    if (!isolated) return true;
    return readFileSync(`/proc/${pid}/mountinfo`, 'utf8')
      .split('\n')
      .some((l) => l.split(' ')[4] === HOST_DEVICE_PLUGIN_DIR);
  } catch {
    return false;
  }
}

/** Starts (or, with `restart`, re-starts) the kubelet of a node whose namespace and runtime run. */
export function kubeletArgv(
  bins: Binaries,
  node: Pick<NodeState, 'namespace' | 'kubeletConfig' | 'kubeconfig' | 'name' | 'rootDir'>,
  nodeIP: string,
): string[] {
  return [
    'nsenter',
    `--target=${node.namespace.pid}`,
    '--mount',
    // Entering a mount namespace moves the working directory to its root; the kubelet's own
    // directory is a safer place for anything it resolves relative to where it runs.
    `--wd=${node.rootDir}`,
    '--',
    bins.kubelet,
    `--config=${node.kubeletConfig}`,
    `--kubeconfig=${node.kubeconfig}`,
    `--hostname-override=${node.name}`,
    `--node-ip=${nodeIP}`,
    `--root-dir=${node.rootDir}`,
    '--v=2',
  ];
}

export async function waitNodeReady(state: ClusterState, node: NodeState, timeoutMs: number): Promise<void> {
  const api = apiClient(state.server, state.pkiDir);
  await waitUntil(
    `node ${node.name} to be Ready`,
    async () => {
      const res = await api.get(`/api/v1/nodes/${node.name}`);
      if (res.status !== 200) return false;
      const obj = JSON.parse(res.body) as { status?: { conditions?: { type: string; status: string }[] } };
      return obj.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
    },
    { timeoutMs, watch: [node.namespace, node.runtime, node.kubelet], intervalMs: 500 },
  );
}

export async function startNode(
  bins: Binaries,
  state: ClusterState,
  spec: NodeSpec,
  opts: { timeoutMs: number },
): Promise<NodeState> {
  const dir = join(state.dir, 'nodes', spec.name);
  const logs = join(state.dir, 'logs');
  const rootDir = join(dir, 'kubelet');
  const devicePluginDir = spec.isolated ? join(dir, 'device-plugins') : HOST_DEVICE_PLUGIN_DIR;
  for (const d of [dir, rootDir, devicePluginDir, join(dir, 'pod-logs'), HOST_DEVICE_PLUGIN_DIR]) {
    mkdirSync(d, { recursive: true });
  }
  const clientFile = `node-${spec.name}`;
  await writeClientCert(bins.pki, state.pkiDir, {
    file: clientFile,
    user: `system:node:${spec.name}`,
    groups: ['system:nodes'],
  });
  const kubeconfig = join(dir, 'kubeconfig');
  writeKubeconfig(kubeconfig, {
    server: state.server,
    pkiDir: state.pkiDir,
    client: clientFile,
    name: 'plugboard-local',
  });
  const port = await freePort();
  const healthzPort = await freePort();
  const runtimeSocket = join(dir, 'runtime.sock');
  const containersRecord = join(dir, 'containers.jsonl');
  const kubeletConfig = join(dir, 'kubelet-config.yaml');
  writeFileSync(
    kubeletConfig,
    stringify(
      kubeletConfiguration({
        nodeIP: state.nodeIP,
        port,
        healthzPort,
        runtimeSocket,
        clientCAFile: join(state.pkiDir, 'ca.crt'),
        podLogsDir: join(dir, 'pod-logs'),
        ...(spec.topologyManagerPolicy ? { topologyManagerPolicy: spec.topologyManagerPolicy } : {}),
        ...(spec.nodeStatusUpdateFrequency
          ? { nodeStatusUpdateFrequency: spec.nodeStatusUpdateFrequency }
          : {}),
      }),
    ),
  );

  const started: ProcessRecord[] = [];
  try {
    const runtime = startDaemon(
      `fake-runtime ${spec.name}`,
      [bins['fake-runtime'], `--listen=${runtimeSocket}`, `--record=${containersRecord}`],
      join(logs, `fake-runtime-${spec.name}.log`),
    );
    started.push(runtime);
    const holder = spec.isolated
      ? [
          '/bin/sh',
          '-c',
          `mount --bind "$0" ${HOST_DEVICE_PLUGIN_DIR} && exec sleep infinity`,
          devicePluginDir,
        ]
      : ['sleep', 'infinity'];
    const namespace = startDaemon(
      `mount namespace ${spec.name}`,
      ['unshare', '--mount', '--propagation', 'private', '--', ...holder],
      join(logs, `namespace-${spec.name}.log`),
    );
    started.push(namespace);
    await waitUntil(
      `the mount namespace of ${spec.name}`,
      () => mountNamespaceReady(namespace.pid, spec.isolated),
      {
        timeoutMs: 10_000,
        watch: [namespace],
        intervalMs: 20,
      },
    );
    await waitUntil(
      `the fake runtime of ${spec.name}`,
      () => statSync(runtimeSocket, { throwIfNoEntry: false })?.isSocket() ?? false,
      { timeoutMs: 10_000, watch: [runtime], intervalMs: 50 },
    );
    const partial = { name: spec.name, namespace, kubeletConfig, kubeconfig, rootDir };
    const kubelet = startDaemon(
      `kubelet ${spec.name}`,
      kubeletArgv(bins, partial, state.nodeIP),
      join(logs, `kubelet-${spec.name}.log`),
    );
    started.push(kubelet);
    const node: NodeState = {
      name: spec.name,
      dir,
      isolated: spec.isolated,
      devicePluginDir,
      rootDir,
      pluginsRegistryDir: join(rootDir, 'plugins_registry'),
      pluginsDir: join(rootDir, 'plugins'),
      podResourcesSocket: join(rootDir, 'pod-resources', 'kubelet.sock'),
      kubeconfig,
      runtimeSocket,
      containersRecord,
      kubeletConfig,
      port,
      healthzPort,
      exec: spec.isolated ? ['nsenter', `--target=${namespace.pid}`, '--mount', '--'] : [],
      namespace,
      runtime,
      kubelet,
    };
    await waitNodeReady(state, node, opts.timeoutMs);
    return node;
  } catch (err) {
    for (const rec of started.reverse()) await stopProcess(rec);
    throw err;
  }
}

/** Stops the kubelet, its namespace and its runtime. */
export async function stopNode(node: NodeState): Promise<void> {
  await stopProcess(node.kubelet);
  await stopProcess(node.namespace);
  await stopProcess(node.runtime);
}
