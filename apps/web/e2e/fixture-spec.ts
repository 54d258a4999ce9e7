// The shape of the browser tests' cluster: nodes, resources and the pods admitted on them. Pure
// data, shared by the fixture process and the specs (which must not load server libraries).

export const GPU = 'plugboard.example/gpu';
export const NIC = 'plugboard.example/nic-vf';
export const SERIAL = 'plugboard.example/serial';

export interface NodeSpec {
  name: string;
  numaNodes: number;
  cpus: number;
  resources: { name: string; simulated: { count: number; numaNodes: number[]; idPrefix?: string } }[];
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
    resources: [{ name: SERIAL, simulated: { count: 4, numaNodes: [0], idPrefix: 'ttyUSB' } }],
    pods: [{ namespace: 'iot', name: 'collector', restartPolicy: 'Always', limits: { [SERIAL]: 1 } }],
  },
];
