// Third-party device plugins and DRA drivers on a test node, simulated or real: upstream's own
// binaries (built from the Go module proxy at the versions pinned in @plugboard/local-cluster's
// third-party.ts) started against the node's directories and API server, so a suite can hold
// Plugboard's kubelet-sim and its observers against plugins Plugboard did not write. On a real node
// the process runs inside the node's mount namespace (RealNode.exec), where the kubelet's fixed
// paths are the node's own.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ensureThirdPartyBinary, type ThirdPartyBinaryName } from '@plugboard/local-cluster';
import type { RealNode } from './real-cluster.js';
import type { TestNode } from './test-node.js';

const TAIL_LINES = 200;

export interface ThirdPartyExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A third-party process the test bed started on a node. */
export interface ThirdPartyProcess {
  binary: ThirdPartyBinaryName;
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
  binary: ThirdPartyBinaryName,
  argv: string[],
  logFile: string,
  env: NodeJS.ProcessEnv,
): ThirdPartyProcess {
  const [cmd, ...args] = argv;
  const child = spawn(cmd!, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
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
export function draExampleDeviceClass(driverName = 'gpu.example.com'): Record<string, unknown> {
  return {
    apiVersion: 'resource.k8s.io/v1',
    kind: 'DeviceClass',
    metadata: { name: driverName },
    spec: { selectors: [{ cel: { expression: `device.driver == '${driverName}'` } }] },
  };
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

/** One `--device` of squat/generic-device-plugin (its README): a name and groups of path globs. */
export interface GenericDeviceSpec {
  /** The resource is `<domain>/<name>`. */
  name: string;
  groups: {
    paths: {
      path: string;
      mountPath?: string;
      type?: 'Device' | 'Mount';
      optional?: boolean;
      limit?: number;
    }[];
    /** How many times each discovered group may be allocated (default 1). */
    count?: number;
  }[];
}

export interface GenericDevicePluginOptions {
  devices: GenericDeviceSpec[];
  /** The resources' domain (upstream's default: squat.ai). */
  domain?: string;
  /** More flags for generic-device-plugin. */
  args?: string[];
}

export interface GenericDevicePlugin extends ThirdPartyProcess {
  /** `<domain>/<name>` of each device spec, as it registers them. */
  resources: string[];
}

/**
 * The device ID generic-device-plugin gives a group of one path (deviceplugin/path.go: the SHA-1 of
 * the count index, then the path), so a test can name the device a pod must hold.
 */
export function genericDeviceId(path: string, countIndex = 0): string {
  return createHash('sha1').update(String(countIndex)).update(path).digest('hex');
}

/**
 * squat/generic-device-plugin on `node`. On kubelet-sim it serves in the node's device-plugin
 * directory (`--plugin-directory`); on a real node it runs inside the node's mount namespace with
 * upstream's default, /var/lib/kubelet/device-plugins, which is that node's own there.
 */
async function genericDevicePlugin(
  node: TestNode,
  opts: GenericDevicePluginOptions,
): Promise<GenericDevicePlugin> {
  const bin = await ensureThirdPartyBinary('generic-device-plugin');
  const domain = opts.domain ?? 'squat.ai';
  const dir = join(node.dir, 'third-party');
  mkdirSync(dir, { recursive: true });
  const exec = nodeExec(node);
  const proc = startProcess(
    'generic-device-plugin',
    [
      ...exec,
      bin,
      `--domain=${domain}`,
      ...opts.devices.map((d) => `--device=${JSON.stringify(d)}`),
      ...(exec.length > 0 ? [] : [`--plugin-directory=${node.devicePluginDir}`]),
      // Its health and metrics server: any free loopback port (the default, :8080, may be taken).
      '--listen=127.0.0.1:0',
      '--log-level=debug',
      ...(opts.args ?? []),
    ],
    join(dir, `generic-device-plugin-${Date.now()}.log`),
    { PATH: process.env.PATH },
  );
  return { ...proc, resources: opts.devices.map((d) => `${domain}/${d.name}`) };
}

/** Third-party plugins and drivers on a test node; each returns a handle with stop(). */
export const thirdParty = { draExampleDriver, genericDevicePlugin };
