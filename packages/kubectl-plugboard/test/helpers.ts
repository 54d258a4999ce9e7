// Test rig for the kubectl plugin: simulated nodes (kubelet-sim + a real gateway running real device
// plugins — and, with `dra`, a real DRA driver registered through kubelet-sim's plugins_registry —
// over Unix sockets in a temp dir, wired as the demo does) and an in-process CLI runner that
// captures stdout/stderr and the exit code.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { startKubeletSim, type KubeletSim, type KubeletSimOptions } from '@plugboard/kubelet-sim';
import type { NodeSnapshot } from '@plugboard/api';
import { parseGatewayConfig, startGateway, type Gateway } from '@plugboard/node-gateway';
import { run } from '../src/cli.js';

export const GPU = 'plugboard.example/gpu';
/** The DRA driver a node started with `dra: true` runs: 4 simulated GPUs on NUMA nodes 0 and 1. */
export const DRA_DRIVER = 'gpu.plugboard.example';

export interface TestNode {
  name: string;
  sim: KubeletSim;
  gateway: Gateway;
}

export interface NodeOptions {
  faults?: boolean;
  /** Static bearer token the gateway accepts for mutations. */
  token?: string;
  /** Also run the DRA driver DRA_DRIVER in the gateway (kubelet-sim's plugins_registry set). */
  dra?: boolean;
  sim?: Partial<KubeletSimOptions>;
}

export async function startNode(root: string, name: string, o: NodeOptions = {}): Promise<TestNode> {
  const dir = join(root, name);
  const plugins = join(dir, 'device-plugins');
  const registry = join(dir, 'plugins_registry');
  for (const d of [plugins, registry, join(dir, 'kubelet'), join(dir, 'gateway')])
    mkdirSync(d, { recursive: true });
  const logger = pino({ level: 'silent' });
  const sim = await startKubeletSim({
    devicePluginDir: plugins,
    stateDir: join(dir, 'kubelet'),
    nodeName: name,
    cpus: 8,
    numaNodes: 2,
    logger,
    ...(o.dra ? { pluginsRegistryDir: registry } : {}),
    ...o.sim,
  });
  let tokenFile: string | null = null;
  if (o.token) {
    tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, o.token);
  }
  try {
    const config = parseGatewayConfig(
      {
        resources: [{ name: GPU, simulated: { count: 4, numaNodes: [0, 1] } }],
        ...(o.dra
          ? {
              dra: [
                {
                  driver: DRA_DRIVER,
                  simulated: { count: 4, numaNodes: [0, 1], idPrefix: 'gpu' },
                  cdi: { class: 'gpu' },
                },
              ],
            }
          : {}),
        gateway: {
          nodeName: name,
          listen: '127.0.0.1:0',
          devicePluginDir: plugins,
          ...(o.dra
            ? { pluginsDir: join(dir, 'plugins'), pluginsRegistryDir: registry, cdiDir: join(dir, 'cdi') }
            : {}),
          stateDir: join(dir, 'gateway'),
          logLevel: 'silent',
          podResources: { socket: sim.podResourcesSocket },
          kube: { mode: 'kubeconfig', kubeconfig: sim.kubeconfigPath, emitEvents: false },
          faults: { enabled: o.faults ?? true },
          ...(tokenFile ? { auth: { tokenFile } } : {}),
        },
      },
      { env: {} },
    );
    const gateway = await startGateway(config, { logger });
    const node = { name, sim, gateway };
    await waitForSnapshot(
      node,
      (s) =>
        s.resources[GPU]?.registration.phase === 'registered' &&
        s.resources[GPU].kubelet.allocatable === 4 &&
        (!o.dra ||
          (s.dra?.drivers[DRA_DRIVER]?.registration?.phase === 'registered' &&
            s.dra.drivers[DRA_DRIVER].counts.published === 4)),
      o.dra
        ? 'registration, allocatable devices and 4 published DRA devices'
        : 'registration and allocatable devices',
    );
    return node;
  } catch (err) {
    await sim.stop();
    throw err;
  }
}

/** Creates an object through kubelet-sim's API server (POST to the collection `path`). */
export async function createObject(node: TestNode, path: string, body: unknown): Promise<void> {
  const res = await fetch(`${node.sim.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status !== 201) throw new Error(`POST ${path}: HTTP ${res.status}: ${await res.text()}`);
}

/** The DeviceClass selecting DRA_DRIVER's devices, named after the driver. */
export function createDeviceClass(node: TestNode): Promise<void> {
  return createObject(node, '/apis/resource.k8s.io/v1/deviceclasses', {
    metadata: { name: DRA_DRIVER },
    spec: { selectors: [{ cel: { expression: `device.driver == "${DRA_DRIVER}"` } }] },
  });
}

/** A ResourceClaimTemplate asking for `count` devices of DRA_DRIVER's class, request `gpus`. */
export function createClaimTemplate(
  node: TestNode,
  namespace: string,
  name: string,
  count: number,
): Promise<void> {
  return createObject(node, `/apis/resource.k8s.io/v1/namespaces/${namespace}/resourceclaimtemplates`, {
    metadata: { name, namespace },
    spec: {
      spec: { devices: { requests: [{ name: 'gpus', exactly: { deviceClassName: DRA_DRIVER, count } }] } },
    },
  });
}

/**
 * A pod with one claim `gpus` from `template`, pinned to `node` by its hostname label: a pending
 * claim is the node's business (in its gateway's snapshot) only for a pod that can go nowhere else.
 */
export function claimPod(namespace: string, name: string, template: string, node: string) {
  return {
    metadata: { name, namespace },
    spec: {
      nodeSelector: { 'kubernetes.io/hostname': node },
      resourceClaims: [{ name: 'gpus', resourceClaimTemplateName: template }],
      containers: [{ name: 'main', resources: { claims: [{ name: 'gpus' }] } }],
    },
  };
}

export async function stopNodes(nodes: TestNode[]): Promise<void> {
  await Promise.allSettled(nodes.map((n) => n.gateway.stop()));
  await Promise.allSettled(nodes.map((n) => n.sim.stop()));
}

/** Resolves once the gateway's snapshot satisfies `predicate`, re-checking on every model change. */
export function waitForSnapshot(
  node: TestNode,
  predicate: (s: NodeSnapshot) => boolean,
  what: string,
  timeoutMs = 10_000,
): Promise<NodeSnapshot> {
  return new Promise((resolve, reject) => {
    const model = node.gateway.model;
    const check = (): void => {
      const snap = model.snapshot();
      if (!predicate(snap)) return;
      cleanup();
      resolve(snap);
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`${node.name}: timed out after ${timeoutMs} ms waiting for ${what}`));
    }, timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      model.off('change', check);
    };
    model.on('change', check);
    check();
  });
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI in-process. `env` is the whole environment the CLI sees (nothing leaks in). */
export async function cli(
  argv: string[],
  o: { env?: NodeJS.ProcessEnv; signal?: AbortSignal; onStdout?: (all: string) => void } = {},
): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await run(argv, {
    env: o.env ?? {},
    signal: o.signal,
    stdout: (s) => {
      stdout += s;
      o.onStdout?.(stdout);
    },
    stderr: (s) => {
      stderr += s;
    },
  });
  return { code, stdout, stderr };
}

export function json<T = Record<string, unknown>>(r: CliResult): T {
  try {
    return JSON.parse(r.stdout) as T;
  } catch {
    throw new Error(`not JSON (exit ${r.code}): ${r.stdout}\nstderr: ${r.stderr}`);
  }
}
