// Test rig for the kubectl plugin: simulated nodes from the test bed (kubelet-sim + the real gateway
// binary running real device plugins — and, with `dra`, a real DRA driver registered through
// kubelet-sim's plugins_registry — over Unix sockets in a temp dir) and an in-process CLI runner that
// captures stdout/stderr and the exit code. The gateway runs as a process: a package's tests never
// import an app.
import { join } from 'node:path';
import type { KubeletSim, KubeletSimOptions } from '@plugboard/kubelet-sim';
import type { NodeSnapshot } from '@plugboard/api';
import {
  gatewayDocument,
  gatewayProcess,
  simNode,
  type GatewayProcess,
  type SimNode,
} from '@plugboard/testbed';
import { run } from '../src/cli.js';

export const GPU = 'plugboard.example/gpu';
/** The DRA driver a node started with `dra: true` runs: 4 simulated GPUs on NUMA nodes 0 and 1. */
export const DRA_DRIVER = 'gpu.plugboard.example';

export interface TestNode {
  name: string;
  /** The test bed's node (its paths, kubeconfig, remove()). */
  node: SimNode;
  sim: KubeletSim;
  gateway: GatewayProcess;
}

export interface NodeOptions {
  faults?: boolean;
  /** Static bearer token the gateway accepts for mutations. */
  token?: string;
  /** Also run the DRA driver DRA_DRIVER in the gateway. */
  dra?: boolean;
  sim?: Partial<KubeletSimOptions>;
}

export async function startNode(root: string, name: string, o: NodeOptions = {}): Promise<TestNode> {
  const node = await simNode(root, name, { sim: { cpus: 8, numaNodes: 2, ...o.sim } });
  let gateway: GatewayProcess | null = null;
  try {
    const document = gatewayDocument(node, {
      resources: [{ name: GPU, simulated: { count: 4, numaNodes: [0, 1] } }],
      dra: o.dra
        ? [
            {
              driver: DRA_DRIVER,
              simulated: { count: 4, numaNodes: [0, 1], idPrefix: 'gpu' },
              cdi: { class: 'gpu' },
            },
          ]
        : [],
      faults: o.faults ?? true,
      stateDir: join(node.dir, 'gateway-state'),
      gateway: { kube: { emitEvents: false } },
    });
    gateway = await gatewayProcess(node, document, o.token ? { token: o.token } : {});
    const started = { name, node, sim: node.sim, gateway };
    await waitForSnapshot(
      started,
      (s) =>
        s.resources[GPU]?.registration.phase === 'registered' &&
        s.resources[GPU].kubelet.allocatable === 4 &&
        (!o.dra ||
          (s.dra?.drivers[DRA_DRIVER]?.registration?.phase === 'registered' &&
            s.dra.drivers[DRA_DRIVER].counts.published === 4)),
      o.dra
        ? 'registration, allocatable devices and 4 published DRA devices'
        : 'registration and allocatable devices',
      30_000,
    );
    return started;
  } catch (err) {
    const log = gateway ? `\ngateway log:\n${gateway.logTail(20)}` : '';
    await gateway?.stop().catch(() => {});
    await node.remove();
    throw log ? new Error(`${(err as Error).message}${log}`, { cause: err }) : err;
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

/** Stops the gateways, then the kubelets; throws (with the log tails) if a gateway did not exit cleanly. */
export async function stopNodes(nodes: TestNode[]): Promise<void> {
  const stopped = await Promise.allSettled(nodes.map((n) => n.gateway.stop()));
  await Promise.allSettled(nodes.map((n) => n.node.remove()));
  const failed = stopped.flatMap((r) => (r.status === 'rejected' ? [r.reason as Error] : []));
  if (failed.length > 0) throw new AggregateError(failed, failed.map((e) => e.message).join('\n'));
}

/** Resolves once the gateway's snapshot satisfies `predicate`, re-checking on every change of its stream. */
export function waitForSnapshot(
  node: TestNode,
  predicate: (s: NodeSnapshot) => boolean,
  what: string,
  timeoutMs = 10_000,
): Promise<NodeSnapshot> {
  return node.gateway.waitForSnapshot(predicate, what, timeoutMs);
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
