// Third-party device plugins and DRA drivers on a test node, simulated or real: upstream's own
// binaries (built by @plugboard/local-cluster: the sample device plugin with the Kubernetes
// binaries, the others from the Go module proxy at the versions pinned in its third-party.ts) started against the node's directories and API server, so a suite can hold
// Plugboard's kubelet-sim and its observers against plugins Plugboard did not write. On a real node
// the process runs inside the node's mount namespace (RealNode.exec), where the kubelet's fixed
// paths are the node's own.
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ensureBinaries, ensureThirdPartyBinary } from '@plugboard/local-cluster';
import { deviceClassFor } from '@plugboard/plugin';
import type { RealNode } from './real-cluster.js';
import type { TestNode } from './test-node.js';

const TAIL_LINES = 200;

export interface ThirdPartyExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A third-party process the test bed started on a node. */
export interface ThirdPartyProcess {
  binary: string;
  pid: number;
  /** Its stdout and stderr, line by line. */
  logFile: string;
  /** The last lines it printed. */
  logTail(lines?: number): string;
  /**
   * The first line it printed (or prints) matching `pattern`; rejects when it exits first or after
   * `timeoutMs`, with its last lines.
   */
  waitForLog(pattern: RegExp, what: string, timeoutMs?: number): Promise<string>;
  /** Resolves when the process has exited, however. */
  exited: Promise<ThirdPartyExit>;
  /** SIGTERM, then SIGKILL if it has not exited within 10 s; resolves once it has exited. */
  stop(): Promise<void>;
}

function startProcess(
  binary: string,
  argv: string[],
  logFile: string,
  env: Record<string, string | undefined>,
): ThirdPartyProcess {
  const [cmd, ...args] = argv;
  // Only the variables given. (Typed as a plain record: compiled beside the dashboard, as the demo's
  // suites are, NodeJS.ProcessEnv carries Next's required NODE_ENV, which a third party is not given.)
  const only = env as NodeJS.ProcessEnv;
  const child = spawn(cmd!, args, { stdio: ['ignore', 'pipe', 'pipe'], env: only });
  // A test process that dies without stopping it must not leave it running.
  const killOnExit = (): void => void child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const log = createWriteStream(logFile);
  const tail: string[] = [];
  const waiters = new Set<(line: string) => void>();
  const onLine = (line: string): void => {
    tail.push(line);
    if (tail.length > TAIL_LINES) tail.shift();
    log.write(`${line}\n`);
    for (const w of waiters) w(line);
  };
  createInterface({ input: child.stdout }).on('line', onLine);
  createInterface({ input: child.stderr }).on('line', onLine);
  let exit: ThirdPartyExit | null = null;
  const exited = new Promise<ThirdPartyExit>((resolve) => {
    const done = (e: ThirdPartyExit): void => {
      if (exit) return;
      exit = e;
      process.off('exit', killOnExit);
      log.end();
      resolve(e);
    };
    child.once('exit', (code, signal) => done({ code, signal }));
    // spawn failed (e.g. the binary is missing): no 'exit' follows.
    child.once('error', (err) => {
      onLine(`spawn ${cmd}: ${err.message}`);
      done({ code: null, signal: null });
    });
  });
  const logTail = (lines = 40): string => tail.slice(-lines).join('\n');
  const describeExit = (e: ThirdPartyExit): string => e.signal ?? `code ${e.code}`;
  return {
    binary,
    pid: child.pid ?? -1,
    logFile,
    logTail,
    exited,
    waitForLog: (pattern, what, timeoutMs = 60_000) => {
      const seen = tail.find((l) => pattern.test(l));
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise<string>((resolve, reject) => {
        const finish = (): void => {
          clearTimeout(timer);
          waiters.delete(onMatch);
        };
        const onMatch = (line: string): void => {
          if (!pattern.test(line)) return;
          finish();
          resolve(line);
        };
        const timer = setTimeout(() => {
          finish();
          reject(new Error(`${binary}: timed out after ${timeoutMs} ms waiting for ${what}:\n${logTail()}`));
        }, timeoutMs);
        waiters.add(onMatch);
        void exited.then((e) => {
          if (!waiters.has(onMatch)) return;
          finish();
          reject(new Error(`${binary} exited (${describeExit(e)}) before ${what}:\n${logTail()}`));
        });
      });
    },
    stop: async () => {
      if (exit) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The argv prefix that runs a process where the node's kubelet sees files: its mount namespace. */
function nodeExec(node: TestNode): string[] {
  return node.kind === 'real' ? (node as RealNode).exec : [];
}

export interface DraExampleDriverOptions {
  /** How many GPUs the driver's `gpu` profile advertises (upstream's default: 8). */
  numDevices?: number;
  /**
   * The kubeconfig the driver reads claims and publishes ResourceSlices with; the node's own by
   * default (kubelet-sim serves every client; on a real node pass the cluster admin's, as the
   * chart's ServiceAccount would have the rights).
   */
  kubeconfig?: string;
  /** Where the driver writes its CDI specs (default: the node's cdiDir). */
  cdiRoot?: string;
  /** More flags for dra-example-kubeletplugin. */
  args?: string[];
}

export interface DraExampleDriver extends ThirdPartyProcess {
  /** `gpu.example.com`: the gpu profile's driver name (the chart's DeviceClass selects on it). */
  driverName: string;
  numDevices: number;
  cdiRoot: string;
  /** Resolves when the kubelet has told the driver it is registered (NotifyRegistrationStatus). */
  registered(timeoutMs?: number): Promise<void>;
}

/** The DeviceClass the driver's Helm chart installs for its gpu profile, as JSON. */
export function draExampleDeviceClass(driverName = 'gpu.example.com'): ReturnType<typeof deviceClassFor> {
  return deviceClassFor(driverName, { name: driverName });
}

/**
 * kubernetes-sigs/dra-example-driver's kubelet plugin on `node`: its `gpu` profile, registering
 * through the node's plugins_registry and serving in its plugins directory.
 */
async function draExampleDriver(
  node: TestNode,
  opts: DraExampleDriverOptions = {},
): Promise<DraExampleDriver> {
  const bin = await ensureThirdPartyBinary('dra-example-kubeletplugin');
  const driverName = 'gpu.example.com';
  const numDevices = opts.numDevices ?? 8;
  const cdiRoot = opts.cdiRoot ?? node.cdiDir;
  const dir = join(node.dir, 'third-party');
  mkdirSync(dir, { recursive: true });
  const proc = startProcess(
    'dra-example-kubeletplugin',
    [
      ...nodeExec(node),
      bin,
      `--node-name=${node.name}`,
      `--num-devices=${numDevices}`,
      `--cdi-root=${cdiRoot}`,
      `--kubelet-registrar-directory-path=${node.pluginsRegistryDir}`,
      `--kubelet-plugins-directory-path=${node.pluginsDir}`,
      `--kubeconfig=${opts.kubeconfig ?? node.kubeconfig}`,
      // -v=6: the Helper logs each gRPC call the kubelet makes (GRPCVerbosity's default), which is
      // how a test sees the registration the kubelet confirmed.
      '-v=6',
      ...(opts.args ?? []),
    ],
    join(dir, `dra-example-kubeletplugin-${Date.now()}.log`),
    // Only what the command line says: no KUBECONFIG, NODE_NAME, … of the test's own environment.
    { PATH: process.env.PATH },
  );
  return {
    ...proc,
    driverName,
    numDevices,
    cdiRoot,
    registered: async (timeoutMs = 60_000) => {
      await proc.waitForLog(
        /handling request succeeded.*NotifyRegistrationStatus/,
        'the kubelet to confirm its registration',
        timeoutMs,
      );
    },
  };
}

export interface DraTestDriverOptions {
  /** How many devices it publishes, `device-00` … (upstream's default: 4). */
  numDevices?: number;
  /** Its driver name (upstream's default: `test-driver.cdi.k8s.io`). */
  driverName?: string;
  /** As for dra-example-driver: the node's own kubeconfig by default. */
  kubeconfig?: string;
  /** Where it writes its CDI specs (default: the node's cdiDir). */
  cdiDir?: string;
}

export interface DraTestDriver extends ThirdPartyProcess {
  driverName: string;
  numDevices: number;
  /** Resolves when the kubelet has told the driver it is registered (NotifyRegistrationStatus). */
  registered(timeoutMs?: number): Promise<void>;
}

/**
 * k8s.io/kubernetes's DRA test driver (test/e2e/dra/test-driver, built with the Kubernetes binaries)
 * as a kubelet plugin on `node`: one pool named after the node with `device-00` … `device-NN`, CDI
 * files per prepared claim, the health service on. It is the second third-party DRA driver beside
 * dra-example-driver: a different code base (the DRA e2e tests'), the same upstream Helper.
 */
async function draTestDriver(node: TestNode, opts: DraTestDriverOptions = {}): Promise<DraTestDriver> {
  const bin = (await ensureBinaries())['dra-test-driver'];
  const driverName = opts.driverName ?? 'test-driver.cdi.k8s.io';
  const numDevices = opts.numDevices ?? 4;
  const dir = join(node.dir, 'third-party');
  mkdirSync(dir, { recursive: true });
  const proc = startProcess(
    'dra-test-driver',
    [
      ...nodeExec(node),
      // It makes only the parent of its socket directory (its DaemonSet mounts the directory itself,
      // a hostPath of type DirectoryOrCreate): made here, where the kubelet sees it.
      'sh',
      '-c',
      'mkdir -p "$1" && shift && exec "$@"',
      'sh',
      join(node.pluginsDir, driverName),
      bin,
      `--kubeconfig=${opts.kubeconfig ?? node.kubeconfig}`,
      `--drivername=${driverName}`,
      // As for dra-example-driver: the Helper logs each gRPC call the kubelet makes at -v=6.
      '-v=6',
      'kubelet-plugin',
      `--node-name=${node.name}`,
      `--num-devices=${numDevices}`,
      `--cdi-dir=${opts.cdiDir ?? node.cdiDir}`,
      `--plugin-registration-path=${node.pluginsRegistryDir}`,
      `--datadir=${node.pluginsDir}`,
    ],
    join(dir, `dra-test-driver-${Date.now()}.log`),
    { PATH: process.env.PATH },
  );
  return {
    ...proc,
    driverName,
    numDevices,
    registered: async (timeoutMs = 60_000) => {
      await proc.waitForLog(
        /handling request succeeded.*NotifyRegistrationStatus/,
        'the kubelet to confirm its registration',
        timeoutMs,
      );
    },
  };
}

/** Upstream's sample device plugin's resource and devices (test/images/sample-device-plugin). */
export const SAMPLE_DEVICE_PLUGIN = {
  resource: 'example.com/resource',
  devices: ['Dev-1', 'Dev-2'],
  /** The directory it registers from and serves in: the device-plugin API's fixed one. */
  dir: '/var/lib/kubelet/device-plugins',
} as const;

export interface SampleDevicePlugin extends ThirdPartyProcess {
  resource: string;
  /** Its device IDs; a pod holding one gets the file `/tmp/<id>` mounted at the same path. */
  devices: readonly string[];
  /** Resolves when the kubelet has accepted its Register call. */
  registered(timeoutMs?: number): Promise<void>;
}

/**
 * k8s.io/kubernetes's own sample device plugin (test/images/sample-device-plugin, the e2e tests'
 * image; built with the Kubernetes binaries) on `node`. It dials the kubelet at the device-plugin
 * API's fixed path, /var/lib/kubelet/device-plugins/kubelet.sock, so it runs where that path is the
 * node's device-plugin directory: inside the node's mount namespace on a real node, and in a private
 * mount namespace with the node's directory bound there on kubelet-sim (`unshare`; as root, else in
 * a user namespace too). Its REGISTER_CONTROL_FILE and CDI_ENABLED modes are not used.
 */
async function sampleDevicePlugin(node: TestNode): Promise<SampleDevicePlugin> {
  const bin = (await ensureBinaries())['sample-device-plugin'];
  const dir = join(node.dir, 'third-party');
  mkdirSync(dir, { recursive: true });
  const argv =
    node.kind === 'real'
      ? [...nodeExec(node), bin]
      : [
          'unshare',
          ...(process.getuid?.() === 0 ? [] : ['--user', '--map-root-user']),
          '--mount',
          '--propagation',
          'private',
          'sh',
          '-c',
          // A tmpfs over /var/lib hides the host's, so nothing is created outside this namespace.
          'mount -t tmpfs tmpfs /var/lib && mkdir -p "$2" && mount --bind "$1" "$2" && exec "$3"',
          'sh',
          node.devicePluginDir,
          SAMPLE_DEVICE_PLUGIN.dir,
          bin,
        ];
  const proc = startProcess(
    'sample-device-plugin',
    argv,
    join(dir, `sample-device-plugin-${Date.now()}.log`),
    { PATH: process.env.PATH, PLUGIN_SOCK_DIR: SAMPLE_DEVICE_PLUGIN.dir },
  );
  return {
    ...proc,
    resource: SAMPLE_DEVICE_PLUGIN.resource,
    devices: SAMPLE_DEVICE_PLUGIN.devices,
    registered: async (timeoutMs = 60_000) => {
      await proc.waitForLog(/Device Plugin registered with the Kubelet/, 'its registration', timeoutMs);
    },
  };
}

/** Third-party plugins and drivers on a test node; each returns a handle with stop(). */
export const thirdParty = { draExampleDriver, draTestDriver, sampleDevicePlugin };
