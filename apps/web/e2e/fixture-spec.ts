// The shape of the browser tests' cluster: nodes, resources and the pods admitted on them. Pure
// data, shared by the fixture process and the specs (which must not load server libraries).

export const GPU = 'plugboard.example/gpu';
export const NIC = 'plugboard.example/nic-vf';
export const SERIAL = 'plugboard.example/serial';
/** The DRA driver of dra-node (and its DeviceClass, same name). */
export const DRA_DRIVER = 'gpu.plugboard.example';

/** observer-node: another device plugin's resource and another DRA driver, neither run by its gateway. */
export const OTHER_GPU = 'other.example/gpu';
export const OTHER_DRA_DRIVER = 'accel.other.example';

/** parts-node: a partitioned GPU (counter set + whole/halves/quarters) and a shared GPU, both DRA (KEP-4815, KEP-5075). */
export const PART_DRIVER = 'part.plugboard.example';
export const SHARE_DRIVER = 'share.plugboard.example';

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
  /** DRA drivers the node's gateway runs (its config's `dra:` list). */
  dra?: {
    driver: string;
    simulated: { count: number; numaNodes: number[]; idPrefix?: string };
    attributes?: Record<string, { string: string } | { int: number } | { version: string }>;
    capacity?: Record<string, string>;
  }[];
  /**
   * Started by the fixture beside the node's gateway, which does not run them (it observes them):
   * device plugins (Plugboard's plugin library as another plugin) and DRA drivers (its DRA driver
   * library).
   */
  others?: {
    resources?: { name: string; simulated: { count: number; numaNodes: number[]; idPrefix?: string } }[];
    dra?: {
      driver: string;
      simulated: { count: number; numaNodes: number[]; idPrefix: string };
      /** Publish each device as its counter set (`memory`) and even partitions of it (`splits`). */
      partitions?: { memory: string; splits: number[] };
      /** Each device shared (allowMultipleAllocations) with this much memory, taken in 10Gi steps. */
      shared?: { memory: string };
      /** Devices in its slices when not `simulated.count` (partitions). */
      published?: number;
    }[];
  };
  /**
   * DeviceClasses (each selecting one driver's devices, optionally mapping an extended resource name
   * to DRA, KEP-5004) and ResourceClaimTemplates created first.
   */
  deviceClasses?: { name: string; driver: string; extendedResourceName?: string }[];
  claimTemplates?: {
    namespace: string;
    name: string;
    deviceClassName: string;
    count: number;
    /** A CEL selector on the request. */
    selector?: string;
    /** `capacity.requests` of the request (a shared device). */
    capacity?: Record<string, string>;
  }[];
  /** Standalone ResourceClaims. */
  claims?: { namespace: string; name: string; deviceClassName: string; count: number }[];
  pods: {
    namespace: string;
    name: string;
    restartPolicy: 'Always' | 'Never';
    limits: Record<string, number>;
    /** `spec.resourceClaims`: from a template or a named claim (the container uses them all). */
    resourceClaims?: ({ name: string; template: string } | { name: string; claim: string })[];
    /**
     * The scheduler cannot place it (its claim fits no device): not bound, so not among the node's
     * pods; its named claims are waited for as pending with the scheduler's message.
     */
    pending?: boolean;
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
  // dra-node: both kubelet APIs side by side on one NUMA map — NIC VFs from a device plugin, GPUs
  // from a DRA driver; two pods with a GPU claim each (one to be evicted by a NoExecute fault), one
  // whose claim asks for more GPUs than the node has (pending, with the scheduler's message).
  {
    name: 'dra-node',
    numaNodes: 2,
    cpus: 16,
    faults: 'open',
    resources: [{ name: NIC, simulated: { count: 4, numaNodes: [0, 1], idPrefix: 'vf' } }],
    dra: [
      {
        driver: DRA_DRIVER,
        simulated: { count: 4, numaNodes: [0, 1], idPrefix: 'gpu' },
        attributes: { model: { string: 'PB-100' }, driverVersion: { version: '1.0.0' } },
        capacity: { memory: '80Gi' },
      },
    ],
    deviceClasses: [{ name: DRA_DRIVER, driver: DRA_DRIVER }],
    claimTemplates: [{ namespace: 'ml', name: 'one-gpu', deviceClassName: DRA_DRIVER, count: 1 }],
    claims: [{ namespace: 'ml', name: 'too-many-gpus', deviceClassName: DRA_DRIVER, count: 5 }],
    pods: [
      {
        namespace: 'ml',
        name: 'dra-train',
        restartPolicy: 'Always',
        limits: { [NIC]: 1 },
        resourceClaims: [{ name: 'gpu', template: 'one-gpu' }],
      },
      {
        namespace: 'ml',
        name: 'dra-evictee',
        restartPolicy: 'Always',
        // No device-plugin device: its eviction leaves the NIC counts other specs check unchanged.
        limits: {},
        resourceClaims: [{ name: 'gpu', template: 'one-gpu' }],
      },
      {
        namespace: 'ml',
        name: 'dra-wide',
        restartPolicy: 'Always',
        limits: {},
        resourceClaims: [{ name: 'gpus', claim: 'too-many-gpus' }],
        pending: true,
      },
    ],
  },
  // observer-node: a gateway with no plugin of its own (`resources: []`) beside another device
  // plugin and a DRA driver it does not run, each with a pod holding one of their devices.
  {
    name: 'observer-node',
    numaNodes: 2,
    cpus: 8,
    faults: 'open',
    resources: [],
    others: {
      resources: [{ name: OTHER_GPU, simulated: { count: 4, numaNodes: [0, 1], idPrefix: 'og' } }],
      dra: [{ driver: OTHER_DRA_DRIVER, simulated: { count: 2, numaNodes: [0, 1], idPrefix: 'acc' } }],
    },
    deviceClasses: [{ name: OTHER_DRA_DRIVER, driver: OTHER_DRA_DRIVER }],
    claimTemplates: [{ namespace: 'ml', name: 'one-acc', deviceClassName: OTHER_DRA_DRIVER, count: 1 }],
    pods: [
      { namespace: 'ml', name: 'observed-user', restartPolicy: 'Always', limits: { [OTHER_GPU]: 1 } },
      {
        namespace: 'ml',
        name: 'acc-holder',
        restartPolicy: 'Always',
        limits: {},
        resourceClaims: [{ name: 'acc', template: 'one-acc' }],
      },
    ],
  },
  // parts-node: an observer gateway beside two DRA drivers of Plugboard's library it does not run —
  // one GPU partitioned over its counter set (two quarters taken by pods), one GPU shared by two
  // claims (20Gi and 10Gi of its 40Gi).
  {
    name: 'parts-node',
    numaNodes: 1,
    cpus: 8,
    faults: 'open',
    resources: [],
    others: {
      dra: [
        {
          driver: PART_DRIVER,
          simulated: { count: 1, numaNodes: [0], idPrefix: 'gpu' },
          partitions: { memory: '40Gi', splits: [1, 2, 4] },
          published: 7,
        },
        {
          driver: SHARE_DRIVER,
          simulated: { count: 1, numaNodes: [0], idPrefix: 'gpu' },
          shared: { memory: '40Gi' },
        },
      ],
    },
    deviceClasses: [
      { name: PART_DRIVER, driver: PART_DRIVER },
      { name: SHARE_DRIVER, driver: SHARE_DRIVER },
    ],
    claimTemplates: [
      {
        namespace: 'ml',
        name: 'quarter-gpu',
        deviceClassName: PART_DRIVER,
        count: 1,
        selector: `device.attributes["${PART_DRIVER}"].partition == "quarter"`,
      },
      {
        namespace: 'ml',
        name: 'gpu-20gi',
        deviceClassName: SHARE_DRIVER,
        count: 1,
        capacity: { memory: '20Gi' },
      },
      {
        namespace: 'ml',
        name: 'gpu-10gi',
        deviceClassName: SHARE_DRIVER,
        count: 1,
        capacity: { memory: '10Gi' },
      },
    ],
    pods: [
      ...['quarter-a', 'quarter-b'].map((name) => ({
        namespace: 'ml',
        name,
        restartPolicy: 'Always' as const,
        limits: {},
        resourceClaims: [{ name: 'gpu', template: 'quarter-gpu' }],
      })),
      {
        namespace: 'ml',
        name: 'share-a',
        restartPolicy: 'Always',
        limits: {},
        resourceClaims: [{ name: 'gpu', template: 'gpu-20gi' }],
      },
      {
        namespace: 'ml',
        name: 'share-b',
        restartPolicy: 'Always',
        limits: {},
        resourceClaims: [{ name: 'gpu', template: 'gpu-10gi' }],
      },
    ],
  },
  // migrate-node: plugboard.example/gpu through DRA (KEP-5004) — its DeviceClass maps the name, so a
  // pod with the same spec as gpu-node-a's (`limits: {plugboard.example/gpu: 1}`, no claim) gets a
  // claim the scheduler generates. With gpu-node-a and gpu-node-b on the device plugin, the cluster
  // is mid-migration (the migration view).
  {
    name: 'migrate-node',
    numaNodes: 1,
    cpus: 8,
    faults: 'open',
    resources: [],
    dra: [{ driver: DRA_DRIVER, simulated: { count: 2, numaNodes: [0], idPrefix: 'gpu' } }],
    deviceClasses: [{ name: DRA_DRIVER, driver: DRA_DRIVER, extendedResourceName: GPU }],
    pods: [{ namespace: 'ml', name: 'train-dra', restartPolicy: 'Always', limits: { [GPU]: 1 } }],
  },
];

/** Extended resource names the node's DeviceClasses map to DRA: a pod asking for one goes through its scheduler. */
export function draExtendedResources(spec: NodeSpec): Set<string> {
  return new Set(
    (spec.deviceClasses ?? []).flatMap((c) => (c.extendedResourceName ? [c.extendedResourceName] : [])),
  );
}

/** Devices a resource advertises: physical devices times replicas. */
export function advertised(res: NodeSpec['resources'][number]): number {
  return res.simulated.count * (res.replicas ?? 1);
}
