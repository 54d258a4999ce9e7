// A real Kubernetes on this machine: etcd, kube-apiserver, kube-controller-manager, kube-scheduler
// and N real kubelets (src/node.ts), all built from upstream source (src/binaries.ts). `up` starts
// them detached and records them in DIR/cluster.json; `down` stops every one of them and leaves no
// process, mount or socket behind; `status` says what runs.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { join, resolve } from 'node:path';
import { execFileSync } from 'node:child_process';
import { connect } from 'node:net';
import { apiClient, healthz } from './api-client.js';
import type { Binaries } from './binaries.js';
import { LocalClusterError } from './errors.js';
import type { TopologyManagerPolicy } from './kubelet-config.js';
import {
  kubeletArgv,
  NODE_NAME_ROOM_BYTES,
  nodeSocketPathProblem,
  startNode,
  stopNode,
  validNodeName,
  waitNodeReady,
  type NodeSpec,
} from './node.js';
import { writeClientCert, writeClusterPki, writeKubeconfig } from './pki.js';
import { assertPortFree, freePort } from './ports.js';
import {
  pidAlive,
  recordAlive,
  startDaemon,
  stopProcess,
  waitUntil,
  type ProcessRecord,
} from './processes.js';
import {
  HOST_DEVICE_PLUGIN_DIR,
  clusterInfo,
  forgetNode,
  readState,
  stateFile,
  writeNode,
  writeState,
  type ClusterInfo,
  type ClusterState,
  type NodeState,
} from './state.js';
import { KUBERNETES_VERSION } from './versions.js';

export interface UpOptions {
  dir: string;
  nodes: number;
  /** kube-apiserver's port on 127.0.0.1 (0: any free port). Default 6443. */
  apiserverPort?: number;
  /** Node names (default node-1 … node-N). */
  nodeNames?: string[];
  topologyManagerPolicy?: TopologyManagerPolicy;
  nodeStatusUpdateFrequency?: string;
  /** How long each component may take to become ready. */
  timeoutMs?: number;
  /** Extra arguments per control-plane component (`--component-arg kube-apiserver=--v=4`), as kind's extraArgs. */
  componentArgs?: Partial<Record<ControlPlaneComponent, string[]>>;
  /** Progress lines (stderr in the CLI). */
  log?: (line: string) => void;
}

export type ControlPlaneComponent = 'etcd' | 'kube-apiserver' | 'kube-controller-manager' | 'kube-scheduler';
export const CONTROL_PLANE_COMPONENTS: readonly ControlPlaneComponent[] = [
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
];

const SERVICE_CIDR = '10.0.0.0/24';
const SERVICE_IP = '10.0.0.1';
const INOTIFY_INSTANCES = '/proc/sys/fs/inotify/max_user_instances';
const WANTED_INOTIFY_INSTANCES = 512;

/** The machine's first non-loopback IPv4 address: a Node IP may not be loopback. */
export function hostNodeIP(): string {
  for (const addrs of Object.values(networkInterfaces())) {
    for (const a of addrs ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  throw new LocalClusterError(
    'internal',
    'this machine has no non-loopback IPv4 address to use as the Node IP',
  );
}

function requireRoot(): void {
  if (process.getuid?.() !== 0) {
    throw new LocalClusterError(
      'not-root',
      'plugboard-cluster must run as root: the kubelet mounts its directories, manages cgroups and serves ' +
        `${HOST_DEVICE_PLUGIN_DIR}, and each node gets its own mount namespace. Run it with sudo.`,
    );
  }
}

function requireTools(): void {
  for (const tool of ['unshare', 'nsenter', 'mount', 'umount', 'sleep']) {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    } catch {
      throw new LocalClusterError(
        'tool-missing',
        `${tool} is not on PATH: install Debian's util-linux (apt-get install util-linux)`,
      );
    }
  }
}

/**
 * Throws, naming what is missing and how to get it, unless this process can run a cluster: root,
 * and util-linux's tools for the nodes' mount namespaces (Go is checked when binaries are built).
 */
export function assertCanRunCluster(): void {
  requireRoot();
  requireTools();
}

/** Kubelets and their cAdvisor take several inotify instances each; 128 (a common default) runs out. */
function raiseInotifyInstances(log: (l: string) => void): void {
  try {
    const now = Number(readFileSync(INOTIFY_INSTANCES, 'utf8'));
    if (now < WANTED_INOTIFY_INSTANCES) {
      writeFileSync(INOTIFY_INSTANCES, String(WANTED_INOTIFY_INSTANCES));
      log(
        `raised fs.inotify.max_user_instances from ${now} to ${WANTED_INOTIFY_INSTANCES} (kubelets watch many files; kind asks the same)`,
      );
    }
  } catch (err) {
    log(`could not raise fs.inotify.max_user_instances: ${String(err)}`);
  }
}

function anyAlive(state: ClusterState): ProcessRecord | null {
  const all = [...state.controlPlane, ...state.nodes.flatMap((n) => [n.kubelet, n.namespace, n.runtime])];
  return all.find((p) => recordAlive(p)) ?? null;
}

/** The names `up --nodes N` gives its nodes. */
export const defaultNodeNames = (count: number): string[] =>
  Array.from({ length: count }, (_, i) => `node-${i + 1}`);

/**
 * Refuses a cluster directory too long for its nodes' sockets (nodeSocketPathProblem) before
 * anything is built or started. Nodes added later (`node add`, the test bed) get names of their own:
 * with none given, a typical length is assumed.
 */
export function assertNodeSocketsFit(dir: string, nodeNames: readonly string[] = []): void {
  for (const n of nodeNames.length > 0 ? nodeNames : ['n'.repeat(NODE_NAME_ROOM_BYTES)]) {
    const problem = nodeSocketPathProblem(resolve(dir), n);
    if (problem) throw new LocalClusterError('usage', problem);
  }
}

/** Refuses a DIR that a running cluster uses, or that holds something else; clears a stopped cluster's. */
function prepareDir(dir: string): void {
  if (existsSync(stateFile(dir))) {
    const old = readState(dir);
    const alive = anyAlive(old);
    if (alive) {
      throw new LocalClusterError(
        'dir-in-use',
        `${dir} is in use by a running cluster (${alive.name}, pid ${alive.pid}): run plugboard-cluster down --dir ${dir} first, or use another --dir`,
      );
    }
    for (const name of readdirSync(dir)) rmSync(join(dir, name), { recursive: true, force: true });
    return;
  }
  if (existsSync(dir) && readdirSync(dir).length > 0) {
    throw new LocalClusterError(
      'dir-in-use',
      `${dir} is not empty and holds no cluster: pass an empty or new --dir`,
    );
  }
  mkdirSync(dir, { recursive: true });
}

/** Refuses when another kubelet already serves the host's device-plugin directory. */
async function assertHostDevicePluginDirFree(): Promise<void> {
  const sock = join(HOST_DEVICE_PLUGIN_DIR, 'kubelet.sock');
  if (!existsSync(sock)) return;
  const answered = await new Promise<boolean>((resolveConnect) => {
    const conn = connect(sock);
    conn.once('connect', () => {
      conn.destroy();
      resolveConnect(true);
    });
    conn.once('error', () => resolveConnect(false));
  });
  if (answered) {
    throw new LocalClusterError(
      'dir-in-use',
      `another kubelet serves ${sock}: stop it (plugboard-cluster down --dir …) before starting a cluster whose first node uses the host's device-plugin directory, or start this one with --nodes 0 and add isolated nodes`,
    );
  }
}

async function startControlPlane(
  bins: Binaries,
  state: ClusterState,
  timeoutMs: number,
  log: (l: string) => void,
  extra: Partial<Record<ControlPlaneComponent, string[]>> = {},
): Promise<void> {
  const logs = join(state.dir, 'logs');
  const { ports, pkiDir } = state;
  const track = (rec: ProcessRecord): ProcessRecord => {
    state.controlPlane.push(rec);
    writeState(state);
    return rec;
  };
  const etcd = track(
    startDaemon(
      'etcd',
      [
        bins.etcd,
        '--name=plugboard',
        `--data-dir=${join(state.dir, 'etcd')}`,
        `--listen-client-urls=http://127.0.0.1:${ports.etcdClient}`,
        `--advertise-client-urls=http://127.0.0.1:${ports.etcdClient}`,
        `--listen-peer-urls=http://127.0.0.1:${ports.etcdPeer}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${ports.etcdPeer}`,
        `--initial-cluster=plugboard=http://127.0.0.1:${ports.etcdPeer}`,
        // A throw-away test cluster: skip fsync (upstream's integration tests do the same).
        '--unsafe-no-fsync',
        '--log-level=warn',
        ...(extra['etcd'] ?? []),
      ],
      join(logs, 'etcd.log'),
    ),
  );
  await waitUntil(
    'etcd to be healthy',
    async () => {
      const res = await fetch(`http://127.0.0.1:${ports.etcdClient}/health`);
      return res.ok && ((await res.json()) as { health?: string }).health === 'true';
    },
    { timeoutMs, watch: [etcd] },
  );
  log(`etcd ready (pid ${etcd.pid})`);

  const apiserver = track(
    startDaemon(
      'kube-apiserver',
      [
        bins['kube-apiserver'],
        `--etcd-servers=http://127.0.0.1:${ports.etcdClient}`,
        '--bind-address=127.0.0.1',
        `--secure-port=${ports.apiserver}`,
        // The kubernetes Service's endpoint may not be loopback.
        `--advertise-address=${state.nodeIP}`,
        `--tls-cert-file=${join(pkiDir, 'apiserver.crt')}`,
        `--tls-private-key-file=${join(pkiDir, 'apiserver.key')}`,
        `--client-ca-file=${join(pkiDir, 'ca.crt')}`,
        // Reach kubelets at their Node IP (this machine), never by resolving the node's name:
        // the names resolve nowhere, and the lookup would leave the machine.
        '--kubelet-preferred-address-types=InternalIP',
        `--kubelet-client-certificate=${join(pkiDir, 'apiserver-kubelet-client.crt')}`,
        `--kubelet-client-key=${join(pkiDir, 'apiserver-kubelet-client.key')}`,
        `--service-account-key-file=${join(pkiDir, 'sa.pub')}`,
        `--service-account-signing-key-file=${join(pkiDir, 'sa.key')}`,
        '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
        '--authorization-mode=Node,RBAC',
        '--enable-admission-plugins=NodeRestriction,ValidatingAdmissionPolicy',
        `--service-cluster-ip-range=${SERVICE_CIDR}`,
        '--allow-privileged=true',
        `--cert-dir=${join(pkiDir, 'generated')}`,
        '--v=1',
        ...(extra['kube-apiserver'] ?? []),
      ],
      join(logs, 'kube-apiserver.log'),
    ),
  );
  const api = apiClient(state.server, pkiDir);
  await waitUntil(
    'kube-apiserver to be ready',
    async () => {
      const res = await api.get('/readyz');
      return res.status === 200;
    },
    { timeoutMs, watch: [etcd, apiserver], intervalMs: 300 },
  );
  log(`kube-apiserver ready on ${state.server} (pid ${apiserver.pid})`);
  // The API server reaches kubelets (logs, exec, nodes/proxy) as this user; kubeadm binds the same.
  const binding = await api.post('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'kube-apiserver-kubelet-client' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:kubelet-api-admin' },
    subjects: [
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'kube-apiserver-kubelet-client' },
    ],
  });
  if (binding.status !== 201 && binding.status !== 409) {
    throw new LocalClusterError(
      'internal',
      `creating the kubelet API binding: HTTP ${binding.status} ${binding.body}`,
    );
  }

  const controlPlaneConfig = join(state.dir, 'control-plane');
  mkdirSync(controlPlaneConfig, { recursive: true });
  const kcmKubeconfig = join(controlPlaneConfig, 'controller-manager.kubeconfig');
  const schedulerKubeconfig = join(controlPlaneConfig, 'scheduler.kubeconfig');
  writeKubeconfig(kcmKubeconfig, {
    server: state.server,
    pkiDir,
    client: 'controller-manager',
    name: 'plugboard-local',
  });
  writeKubeconfig(schedulerKubeconfig, {
    server: state.server,
    pkiDir,
    client: 'scheduler',
    name: 'plugboard-local',
  });
  const kcm = track(
    startDaemon(
      'kube-controller-manager',
      [
        bins['kube-controller-manager'],
        `--kubeconfig=${kcmKubeconfig}`,
        `--authentication-kubeconfig=${kcmKubeconfig}`,
        `--authorization-kubeconfig=${kcmKubeconfig}`,
        '--bind-address=127.0.0.1',
        `--secure-port=${ports.controllerManager}`,
        `--service-account-private-key-file=${join(pkiDir, 'sa.key')}`,
        `--root-ca-file=${join(pkiDir, 'ca.crt')}`,
        `--cluster-signing-cert-file=${join(pkiDir, 'ca.crt')}`,
        `--cluster-signing-key-file=${join(pkiDir, 'ca.key')}`,
        '--use-service-account-credentials=true',
        `--service-cluster-ip-range=${SERVICE_CIDR}`,
        '--leader-elect=false',
        '--v=1',
        ...(extra['kube-controller-manager'] ?? []),
      ],
      join(logs, 'kube-controller-manager.log'),
    ),
  );
  const scheduler = track(
    startDaemon(
      'kube-scheduler',
      [
        bins['kube-scheduler'],
        `--kubeconfig=${schedulerKubeconfig}`,
        `--authentication-kubeconfig=${schedulerKubeconfig}`,
        `--authorization-kubeconfig=${schedulerKubeconfig}`,
        '--bind-address=127.0.0.1',
        `--secure-port=${ports.scheduler}`,
        '--leader-elect=false',
        '--v=1',
        ...(extra['kube-scheduler'] ?? []),
      ],
      join(logs, 'kube-scheduler.log'),
    ),
  );
  await waitUntil(
    'kube-controller-manager to be healthy',
    () => healthz(`https://127.0.0.1:${ports.controllerManager}/healthz`),
    {
      timeoutMs,
      watch: [apiserver, kcm, scheduler],
    },
  );
  await waitUntil(
    'kube-scheduler to be healthy',
    () => healthz(`https://127.0.0.1:${ports.scheduler}/healthz`),
    {
      timeoutMs,
      watch: [apiserver, kcm, scheduler],
    },
  );
  // Pods need their namespace's default ServiceAccount (admission) and kube-root-ca.crt (their
  // projected token volume), which the controller manager creates.
  await waitUntil(
    'the default ServiceAccount and kube-root-ca.crt',
    async () =>
      (await api.get('/api/v1/namespaces/default/serviceaccounts/default')).status === 200 &&
      (await api.get('/api/v1/namespaces/default/configmaps/kube-root-ca.crt')).status === 200,
    { timeoutMs, watch: [apiserver, kcm], intervalMs: 300 },
  );
  log(`kube-controller-manager (pid ${kcm.pid}) and kube-scheduler (pid ${scheduler.pid}) ready`);
}

/** Brings a cluster up; on any failure stops whatever it started and rethrows. */
export async function up(bins: Binaries, opts: UpOptions): Promise<ClusterInfo> {
  const log = opts.log ?? (() => undefined);
  const timeoutMs = opts.timeoutMs ?? 180_000;
  if (!Number.isInteger(opts.nodes) || opts.nodes < 0) {
    throw new LocalClusterError('usage', `--nodes: expected a whole number ≥ 0, got ${String(opts.nodes)}`);
  }
  const names = opts.nodeNames ?? defaultNodeNames(opts.nodes);
  for (const n of names) {
    if (!validNodeName(n))
      throw new LocalClusterError('usage', `node name "${n}": expected a DNS label (a-z, 0-9, -)`);
  }
  requireRoot();
  requireTools();
  const dir = resolve(opts.dir);
  assertNodeSocketsFit(dir, names);
  prepareDir(dir);
  if (names.length > 0) await assertHostDevicePluginDirFree();
  const apiserverPort = opts.apiserverPort ?? 6443;
  if (apiserverPort !== 0)
    await assertPortFree(apiserverPort, '127.0.0.1', 'kube-apiserver', '--apiserver-port');
  raiseInotifyInstances(log);

  const nodeIP = hostNodeIP();
  const port = apiserverPort || (await freePort());
  const pkiDir = join(dir, 'pki');
  mkdirSync(join(dir, 'logs'), { recursive: true });
  const state: ClusterState = {
    version: KUBERNETES_VERSION,
    dir,
    server: `https://127.0.0.1:${port}`,
    nodeIP,
    pkiDir,
    kubeconfig: join(dir, 'kubeconfig'),
    ports: {
      apiserver: port,
      etcdClient: await freePort(),
      etcdPeer: await freePort(),
      controllerManager: await freePort(),
      scheduler: await freePort(),
    },
    controlPlane: [],
    nodes: [],
  };
  writeState(state);
  try {
    await writeClusterPki(bins.pki, pkiDir, [
      '127.0.0.1',
      nodeIP,
      SERVICE_IP,
      'localhost',
      'kubernetes',
      'kubernetes.default',
      'kubernetes.default.svc',
      'kubernetes.default.svc.cluster.local',
    ]);
    await writeClientCert(bins.pki, pkiDir, {
      file: 'admin',
      user: 'kubernetes-admin',
      groups: ['system:masters'],
    });
    await writeClientCert(bins.pki, pkiDir, {
      file: 'controller-manager',
      user: 'system:kube-controller-manager',
    });
    await writeClientCert(bins.pki, pkiDir, { file: 'scheduler', user: 'system:kube-scheduler' });
    writeKubeconfig(state.kubeconfig, {
      server: state.server,
      pkiDir,
      client: 'admin',
      name: 'plugboard-local',
    });
    await startControlPlane(bins, state, timeoutMs, log, opts.componentArgs);
    for (const [i, name] of names.entries()) {
      await addNode(
        bins,
        state,
        {
          name,
          isolated: i > 0,
          topologyManagerPolicy: opts.topologyManagerPolicy,
          nodeStatusUpdateFrequency: opts.nodeStatusUpdateFrequency,
        },
        { timeoutMs, log },
      );
    }
    return clusterInfo(state);
  } catch (err) {
    await stopAll(state);
    throw err;
  }
}

/** Adds a node to a running cluster (isolated unless it is the first to use the host's directory). */
export async function addNode(
  bins: Binaries,
  state: ClusterState,
  spec: Partial<NodeSpec> & { name: string },
  opts: { timeoutMs?: number; log?: (l: string) => void } = {},
): Promise<NodeState> {
  if (!validNodeName(spec.name))
    throw new LocalClusterError('usage', `node name "${spec.name}": expected a DNS label (a-z, 0-9, -)`);
  if (state.nodes.some((n) => n.name === spec.name)) {
    throw new LocalClusterError('usage', `node ${spec.name} already exists in ${state.dir}`);
  }
  const problem = nodeSocketPathProblem(state.dir, spec.name);
  if (problem) throw new LocalClusterError('usage', problem);
  const isolated = spec.isolated ?? true;
  const node = await startNode(bins, state, { ...spec, isolated }, { timeoutMs: opts.timeoutMs ?? 180_000 });
  state.nodes.push(node);
  writeNode(state, node);
  opts.log?.(
    `node ${node.name} Ready (kubelet pid ${node.kubelet.pid}${isolated ? ', own device-plugin directory' : ''})`,
  );
  return node;
}

function findNode(state: ClusterState, name: string): NodeState {
  const node = state.nodes.find((n) => n.name === name);
  if (!node) throw new LocalClusterError('usage', `no node ${name} in ${state.dir}`);
  return node;
}

/** Stops a node's kubelet (its runtime, namespace and plugins stay), as when a kubelet goes down. */
export async function stopKubelet(state: ClusterState, name: string): Promise<void> {
  await stopProcess(findNode(state, name).kubelet);
}

/** Starts a stopped node's kubelet again with the same arguments; resolves when the Node is Ready. */
export async function startKubelet(
  bins: Binaries,
  state: ClusterState,
  name: string,
  opts: { timeoutMs?: number } = {},
): Promise<NodeState> {
  const node = findNode(state, name);
  if (recordAlive(node.kubelet))
    throw new LocalClusterError('usage', `the kubelet of ${name} runs (pid ${node.kubelet.pid})`);
  node.kubelet = startDaemon(`kubelet ${name}`, kubeletArgv(bins, node, state.nodeIP), node.kubelet.log);
  writeNode(state, node);
  await waitUntil(`kubelet ${name} to answer healthz`, () => healthzHttp(node.healthzPort), {
    timeoutMs: opts.timeoutMs ?? 120_000,
    watch: [node.kubelet],
  });
  await waitNodeReady(state, node, opts.timeoutMs ?? 120_000);
  return node;
}

/** Stops a node's kubelet and starts it again with the same arguments, as a kubelet restart does. */
export async function restartKubelet(
  bins: Binaries,
  state: ClusterState,
  name: string,
  opts: { timeoutMs?: number } = {},
): Promise<NodeState> {
  await stopKubelet(state, name);
  return startKubelet(bins, state, name, opts);
}

/** Stops a node's processes (the Node object stays in the API, as when a machine goes away). */
export async function removeNode(state: ClusterState, name: string): Promise<void> {
  const node = findNode(state, name);
  await stopNode(node);
  cleanNode(node);
  state.nodes = state.nodes.filter((n) => n !== node);
  forgetNode(state, name);
}

async function healthzHttp(port: number): Promise<boolean> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/healthz`);
    return res.ok;
  } catch {
    return false;
  }
}

function cleanNode(node: NodeState): void {
  if (!node.isolated) {
    // The host's directory: the kubelet's socket and checkpoint are this cluster's.
    for (const f of ['kubelet.sock', 'kubelet_internal_checkpoint'])
      rmSync(join(HOST_DEVICE_PLUGIN_DIR, f), { force: true });
  }
  for (const sock of [node.runtimeSocket]) rmSync(sock, { force: true });
}

/** Mount points at or below dir in this (the host's) mount namespace, deepest first. */
function mountsBelow(dir: string): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '')
    .filter((m) => m === dir || m.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
}

/** Every Unix socket under `dir`, at any depth (what a stopped cluster or demo must not leave). */
export function socketsUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    let entries;
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const full = join(d, e.name);
      if (e.isDirectory()) walk(full);
      else if (e.isSocket()) out.push(full);
    }
  };
  walk(dir);
  return out;
}

async function stopAll(state: ClusterState): Promise<void> {
  for (const node of [...state.nodes].reverse()) {
    await stopNode(node);
    cleanNode(node);
  }
  for (const rec of [...state.controlPlane].reverse()) await stopProcess(rec);
  for (const m of mountsBelow(state.dir)) {
    try {
      execFileSync('umount', ['-l', m], { stdio: 'ignore' });
    } catch {
      // Already gone.
    }
  }
  for (const socket of socketsUnder(state.dir)) unlinkSync(socket);
}

/** Stops every process of the cluster in DIR, unmounts what it mounted, removes its sockets. */
export async function down(dir: string): Promise<{ stopped: string[] }> {
  requireRoot();
  const state = readState(resolve(dir));
  const stopped = [...state.controlPlane, ...state.nodes.flatMap((n) => [n.kubelet, n.namespace, n.runtime])]
    .filter((p) => recordAlive(p))
    .map((p) => p.name);
  await stopAll(state);
  return { stopped };
}

export interface ComponentStatus {
  name: string;
  pid: number;
  up: boolean;
  log: string;
}

/** Each component and node: up or not, with its log. */
export function status(dir: string): { info: ClusterInfo; components: ComponentStatus[] } {
  const state = readState(resolve(dir));
  const components: ComponentStatus[] = [];
  for (const rec of state.controlPlane)
    components.push({ name: rec.name, pid: rec.pid, up: recordAlive(rec), log: rec.log });
  for (const n of state.nodes) {
    for (const rec of [n.runtime, n.namespace, n.kubelet]) {
      components.push({
        name: rec.name,
        pid: rec.pid,
        up: pidAlive(rec.pid) && recordAlive(rec),
        log: rec.log,
      });
    }
  }
  return { info: clusterInfo(state), components };
}

export { readState };
