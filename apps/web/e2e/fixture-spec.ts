// The shape of the browser tests' cluster: nodes, resources and the pods admitted on them. Pure
// data, shared by the fixture process and the specs (which must not load server libraries).

export const GPU = 'plugboard.example/gpu';
export const NIC = 'plugboard.example/nic-vf';
export const SERIAL = 'plugboard.example/serial';

/** Bearer token of the gateway that requires one (a test-only secret). */
export const E2E_TOKEN = 'e2e-gateway-token-8c1f0d5a';

export interface NodeSpec {
  name: string;
  numaNodes: number;
  cpus: number;
  /** open: faults on, no auth (loopback demo); token: faults on, bearer token required; disabled: faults off. */
  faults: 'open' | 'token' | 'disabled';
  resources: {
    name: string;
    simulated: { count: number; numaNodes: number[]; idPrefix?: string };
    replicas?: number;
  }[];
  pods: {
    namespace: string;
    name: string;
    restartPolicy: 'Always' | 'Never';
    limits: Record<string, number>;
  }[];
}

export const NODES: NodeSpec[] = [
  {
    name: 'gpu-node-a',
    numaNodes: 2,
    cpus: 64,
    faults: 'open',
    resources: [
      { name: GPU, simulated: { count: 8, numaNodes: [0, 1] } },
      { name: NIC, simulated: { count: 8, numaNodes: [0, 1], idPrefix: 'vf' } },
    ],
    pods: [
      { namespace: 'ml', name: 'train', restartPolicy: 'Always', limits: { [GPU]: 2, [NIC]: 1 } },
      { namespace: 'ml', name: 'infer', restartPolicy: 'Never', limits: { [GPU]: 1 } },
      { namespace: 'net', name: 'router', restartPolicy: 'Always', limits: { [NIC]: 2 } },
    ],
  },
  {
    name: 'edge-node',
    numaNodes: 1,
    cpus: 8,
    faults: 'token',
    resources: [{ name: SERIAL, simulated: { count: 4, numaNodes: [0], idPrefix: 'ttyUSB' } }],
    pods: [{ namespace: 'iot', name: 'collector', restartPolicy: 'Always', limits: { [SERIAL]: 1 } }],
  },
  {
    name: 'gpu-node-b',
    numaNodes: 1,
    cpus: 16,
    faults: 'disabled',
    resources: [{ name: GPU, simulated: { count: 2, numaNodes: [0] }, replicas: 4 }],
    pods: [
      { namespace: 'ml', name: 'notebook-1', restartPolicy: 'Always', limits: { [GPU]: 1 } },
      { namespace: 'ml', name: 'notebook-2', restartPolicy: 'Always', limits: { [GPU]: 1 } },
      { namespace: 'ml', name: 'notebook-3', restartPolicy: 'Always', limits: { [GPU]: 1 } },
    ],
  },
];

/** Devices a resource advertises: physical devices times replicas. */
export function advertised(res: NodeSpec['resources'][number]): number {
  return res.simulated.count * (res.replicas ?? 1);
}
