// Node snapshots for the unit tests of the CLI's views, built from the wire contract's types
// (@plugboard/api): a node with a device plugin and a DRA driver side by side — a prepared claim, a
// pending one, a faulted device tainted NoExecute — and a node from a gateway older than DRA support.
// Plus a stand-in gateway connection that answers from such snapshots and records what it was sent.
import { EventEmitter } from 'node:events';
import type {
  DeviceState,
  DraClaimRequest,
  DraClaimState,
  DraDeviceState,
  DraDriverState,
  FaultState,
  NodeSnapshot,
  NodeSummary,
  PodState,
  ResourceState,
  StreamMessage,
} from '@plugboard/api';
import { containerState, draDeviceState, gatewayInfo, pluginRegisteredAt } from '@plugboard/api/testing';
import type { WebSocket } from 'ws';
import type { CliIo, CommandContext } from '../src/context.js';
import { CliError } from '../src/errors.js';
import type { OutputFormat } from '../src/output.js';
import type { GatewayConnection, GatewayRequest } from '../src/transport.js';

export const GPU = 'plugboard.example/gpu';
export const DRIVER = 'gpu.plugboard.example';
export const NOW = Date.parse('2026-01-01T12:00:00Z');
const T0 = '2026-01-01T11:00:00.000Z';

const counts = { capacity: 2, allocatable: 2, allocated: 1, free: 1, healthy: 2, unhealthy: 0 };

function pluginDevice(id: string, numa: number, allocation: DeviceState['allocation']): DeviceState {
  return {
    key: `${GPU}/${id}`,
    resource: GPU,
    id,
    health: 'Healthy',
    reason: null,
    since: T0,
    numaNodes: [numa],
    replicaOf: null,
    kubeletHealth: 'Healthy',
    fault: null,
    faulted: false,
    allocation,
  };
}

/** The driver's device `name` in node `node`'s pool: an 80Gi GPU on NUMA node 0, healthy since T0. */
export function draDevice(node: string, name: string, o: Partial<DraDeviceState> = {}): DraDeviceState {
  return draDeviceState({
    driver: DRIVER,
    pool: node,
    name,
    since: T0,
    attributes: { id: { string: name } },
    capacity: { memory: '80Gi' },
    numaNodes: [0],
    ...o,
  });
}

/** One request `gpu` for a device of the driver's class. */
export function claimRequest(o: Partial<DraClaimRequest> = {}): DraClaimRequest {
  return {
    name: 'gpu',
    deviceClassName: DRIVER,
    allocationMode: 'ExactCount',
    count: 1,
    selectors: [],
    firstAvailable: [],
    adminAccess: false,
    ...o,
  };
}

export function draClaim(namespace: string, name: string, o: Partial<DraClaimState> = {}): DraClaimState {
  return {
    key: `${namespace}/${name}`,
    namespace,
    name,
    uid: `uid-${name}`,
    owner: null,
    requests: [claimRequest()],
    phase: 'pending',
    devices: [],
    reservedFor: [],
    health: null,
    pendingReason: null,
    deleting: false,
    ...o,
  };
}

function pod(namespace: string, name: string, o: Partial<PodState> = {}): PodState {
  return {
    key: `${namespace}/${name}`,
    namespace,
    name,
    phase: 'Running',
    reason: null,
    containers: [],
    affectedByUnhealthyDevice: false,
    numaAlignment: { verdict: 'aligned', numaNodes: [0], reason: 'one NUMA node' },
    ...o,
  };
}

/**
 * node-a: device plugin `plugboard.example/gpu` (gpu-0 held by ml/legacy, gpu-1 free) and DRA driver
 * `gpu.plugboard.example` with gpu-0 prepared for claim ml/trainer-gpu (pod ml/trainer), gpu-1
 * faulted and tainted NoExecute, gpu-2 free; claim ml/waiter-gpu pending for pod ml/waiter.
 */
export function draNode(node = 'node-a'): NodeSnapshot {
  const key = (d: string) => `${DRIVER}/${node}/${d}`;
  const devices: Record<string, DraDeviceState> = {
    [key('gpu-0')]: draDevice(node, 'gpu-0', {
      allocations: [{ claim: 'ml/trainer-gpu', request: 'gpu', adminAccess: false, pods: ['ml/trainer'] }],
    }),
    [key('gpu-1')]: draDevice(node, 'gpu-1', {
      numaNodes: [1],
      health: 'Unhealthy',
      reason: 'drill',
      since: '2026-01-01T11:58:00.000Z',
      kubeletHealth: 'Unhealthy',
      fault: 'active',
      taints: [
        {
          key: `${DRIVER}/unhealthy`,
          value: 'fault',
          effect: 'NoExecute',
          timeAdded: '2026-01-01T11:58:00Z',
          source: 'ResourceSlice',
        },
      ],
    }),
    [key('gpu-2')]: draDevice(node, 'gpu-2', { numaNodes: [1], kubeletHealth: null }),
  };
  const driver: DraDriverState = {
    name: DRIVER,
    inProcess: true,
    registration: { phase: 'registered', registeredAt: T0, error: null },
    healthStreams: 1,
    publication: { generation: 2, slices: 1, lastPublishedAt: T0, error: null },
    pools: { [node]: { name: node, generation: 2, slices: ['slice-0'], deviceKeys: Object.keys(devices) } },
    counts: { published: 3, usable: 2, allocated: 1, free: 1, unhealthy: 1, tainted: 1 },
  };
  const claims: Record<string, DraClaimState> = {
    'ml/trainer-gpu': draClaim('ml', 'trainer-gpu', {
      owner: { pod: 'ml/trainer', podClaimName: 'gpu' },
      phase: 'prepared',
      devices: [
        {
          request: 'gpu',
          driver: DRIVER,
          pool: node,
          device: 'gpu-0',
          deviceKey: key('gpu-0'),
          adminAccess: false,
        },
      ],
      reservedFor: ['ml/trainer'],
      health: 'Healthy',
    }),
    'ml/waiter-gpu': draClaim('ml', 'waiter-gpu', {
      owner: { pod: 'ml/waiter', podClaimName: 'gpu' },
      requests: [
        claimRequest({
          name: 'gpus',
          count: 4,
          selectors: ['device.attributes["gpu.plugboard.example"].model == "h100"'],
        }),
      ],
      pendingReason: '0/1 nodes are available: 1 cannot allocate all claims.',
    }),
  };
  const resource: ResourceState = {
    name: GPU,
    kubelet: counts,
    apiServer: { capacity: 2, allocatable: 2, staleSince: null },
    registration: pluginRegisteredAt(T0),
    replicas: 1,
    deviceKeys: [`${GPU}/gpu-0`, `${GPU}/gpu-1`],
  };
  const fault: FaultState = {
    id: 'f-1',
    resource: DRIVER,
    deviceId: 'gpu-1',
    reason: 'drill',
    createdAt: '2026-01-01T11:58:00.000Z',
    expiresAt: null,
    scenarioId: null,
    simulated: true,
    taint: 'NoExecute',
    state: 'active',
    stateReason: null,
  };
  return {
    schema: 1,
    nodeName: node,
    updatedAt: T0,
    gateway: gatewayInfo(T0, { persistence: { enabled: true } }),
    resources: { [GPU]: resource },
    devices: {
      [`${GPU}/gpu-0`]: pluginDevice('gpu-0', 0, { namespace: 'ml', pod: 'legacy', container: 'main' }),
      [`${GPU}/gpu-1`]: pluginDevice('gpu-1', 1, null),
    },
    numa: { nodes: {} },
    pods: {
      'ml/legacy': pod('ml', 'legacy', {
        containers: [containerState({ devices: { [GPU]: [`${GPU}/gpu-0`] } })],
      }),
      'ml/trainer': pod('ml', 'trainer', {
        claims: [{ name: 'gpu', claim: 'ml/trainer-gpu', fromTemplate: true }],
        containers: [
          containerState({
            dynamicResources: [
              {
                claimName: 'trainer-gpu',
                claimNamespace: 'ml',
                devices: [{ driver: DRIVER, pool: node, device: 'gpu-0', cdiDevices: ['k8s.x/gpu=a'] }],
              },
            ],
          }),
        ],
      }),
      'ml/waiter': pod('ml', 'waiter', {
        phase: 'Pending',
        claims: [{ name: 'gpu', claim: 'ml/waiter-gpu', fromTemplate: true }],
        containers: [containerState({ state: 'waiting' })],
        numaAlignment: { verdict: 'no-preference', numaNodes: [], reason: 'nothing placed' },
      }),
    },
    faults: { [fault.id]: fault },
    events: [],
    sources: {
      podResources: { status: 'ok', lastSuccess: T0, reason: null },
      kubernetes: { status: 'ok', lastSuccess: T0, reason: null },
    },
    dra: { drivers: { [DRIVER]: driver }, devices, claims },
  };
}

/** node-b: the device plugin only, from a gateway that predates DRA (no `dra` at all). */
export function legacyNode(node = 'node-b'): NodeSnapshot {
  const s = draNode(node);
  const { dra: _dra, ...rest } = s;
  return {
    ...rest,
    pods: { 'ml/legacy': s.pods['ml/legacy']! },
    faults: {},
  };
}

/** The summary a gateway would serve for `s` (what the fixtures need of it). */
function summaryOf(s: NodeSnapshot): NodeSummary {
  const resources: NodeSummary['resources'] = {};
  for (const r of Object.values(s.resources))
    resources[r.name] = {
      ...r.kubelet,
      ...(r.servedBy ? { servedBy: r.servedBy } : {}),
      ...(r.observed ? { observed: r.observed } : {}),
      apiServer: r.apiServer,
      registered: true,
      registration: 'registered',
    };
  const dra = s.dra;
  return {
    schema: 1,
    nodeName: s.nodeName,
    updatedAt: s.updatedAt,
    resources,
    unhealthyDevices: 0,
    activeFaults: Object.keys(s.faults).length,
    faultsEnabled: true,
    sources: s.sources,
    ...(dra
      ? {
          dra: {
            drivers: Object.fromEntries(Object.values(dra.drivers).map((d) => [d.name, d.counts])),
            deviceClasses: {},
            pendingClaims: Object.values(dra.claims)
              .filter((c) => c.phase === 'pending')
              .map((c) => c.key),
          },
        }
      : {}),
  };
}

/** A gateway connection answering GET /api/v1/node, /api/v1/summary and /api/v1/faults from a snapshot. */
export class FixtureGateway implements GatewayConnection {
  readonly sent: { path: string; req: GatewayRequest }[] = [];
  constructor(
    public snapshot: NodeSnapshot,
    readonly label = `http://${snapshot.nodeName}.test`,
  ) {}

  nodeName(): Promise<string> {
    return Promise.resolve(this.snapshot.nodeName);
  }

  request<T>(path: string, req: GatewayRequest = {}): Promise<T> {
    this.sent.push({ path, req });
    const method = req.method ?? 'GET';
    if (method === 'GET' && path === '/api/v1/node') return Promise.resolve(this.snapshot as T);
    if (method === 'GET' && path === '/api/v1/summary') return Promise.resolve(summaryOf(this.snapshot) as T);
    if (method === 'GET' && path.startsWith('/api/v1/faults'))
      return Promise.resolve({ items: Object.values(this.snapshot.faults) } as T);
    if (method === 'POST' && path === '/api/v1/faults') {
      const body = JSON.parse(req.body ?? '{}') as Partial<FaultState>;
      const fault = { ...Object.values(draNode().faults)[0]!, ...body, id: 'f-new' };
      return Promise.resolve({ id: fault.id, fault } as T);
    }
    return Promise.reject(new CliError('not-found', `${this.label}: no fixture for ${method} ${path}`));
  }

  /** The open stream's message handler (`push` sends it a message). */
  #stream: { onMessage: (data: Buffer) => void; socket: EventEmitter } | null = null;

  openStream(_path: string, onMessage: (data: Buffer) => void): Promise<WebSocket> {
    const socket = new EventEmitter();
    // As with a real socket, the close event and the first message come on later turns.
    const close = () => {
      this.#stream = null;
      setImmediate(() => socket.emit('close'));
    };
    Object.assign(socket, { close, terminate: close });
    this.#stream = { onMessage, socket };
    setImmediate(() =>
      onMessage(Buffer.from(JSON.stringify({ type: 'snapshot', seq: 1, node: this.snapshot }))),
    );
    return Promise.resolve(socket as unknown as WebSocket);
  }

  /** Sends the open stream a message, as the gateway would. */
  push(message: StreamMessage): void {
    if (!this.#stream) throw new Error('no stream open');
    this.#stream.onMessage(Buffer.from(JSON.stringify(message)));
  }
}

/** A command context over fixture gateways that captures what the command prints. */
export function fixtureContext(
  gateways: GatewayConnection[],
  output: OutputFormat = 'table',
  o: { signal?: AbortSignal; onStdout?: (all: string) => void } = {},
): { ctx: CommandContext; out: { stdout: string; stderr: string } } {
  const out = { stdout: '', stderr: '' };
  const io: CliIo = {
    signal: o.signal,
    stdout: (s) => {
      out.stdout += s;
      o.onStdout?.(out.stdout);
    },
    stderr: (s) => void (out.stderr += s),
    isTTY: false,
    now: () => NOW,
  };
  return { ctx: { io, output, gateways: () => Promise.resolve(gateways), partialErrors: [] }, out };
}
