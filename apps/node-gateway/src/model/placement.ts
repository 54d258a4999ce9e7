// "Try to place" as a prediction: where the kubelet would put a pod, or why it would refuse it,
// worked out by the gateway itself with the kubelet's own rules (@plugboard/topology, the code
// kubelet-sim admits with) — so it works on a real node, with no kubelet-sim. The managers are
// rebuilt for every preview from what a node agent can read:
//   - the NUMA layout (CPUs per NUMA node, SMT siblings) from sysfs;
//   - the Topology/CPU/Memory Manager policies, the scope and the reserved CPUs from the kubelet's
//     configz (or kubelet-sim's control API);
//   - what is already allocated — devices, exclusive CPUs, memory blocks — and the Memory Manager's
//     per-NUMA allocatable from PodResources;
//   - the devices as the kubelet was last told on ListAndWatch, and each plugin's own preferred
//     allocation (the same policy its GetPreferredAllocation answers with);
//   - the node's allocatable and the other pods' requests from the API server (the node-resources
//     predicate), when the Kubernetes API is on.
// The answer is an admission decision labelled `source: 'prediction'`, with notes on what it could
// not see. Nothing here does I/O; the Placement class gathers the inputs through its dependencies.
import { randomBytes } from 'node:crypto';
import type { AdmissionView } from '@plugboard/api';
import {
  admissionRejection,
  checkNodeResources,
  containerRequests,
  CpuManager,
  devicesByNuma,
  devicesToAllocate,
  generateDeviceTopologyHints,
  machineFromLayout,
  MemoryManager,
  parseInteger,
  parseMilliCpu,
  parseQuantity,
  qosClass,
  TOPOLOGY_MANAGER_POLICIES,
  TOPOLOGY_MANAGER_SCOPES,
  TopologyAdmission,
  TopologyError,
  type ContainerInput,
  type CpuManagerPolicy,
  type DeviceAllocation,
  type DeviceHintProvider,
  type DeviceView,
  type HugepageResource,
  type Mask,
  type MemoryManagerPolicy,
  type MemoryResource,
  type PodRequests,
  type TopologyHint,
  type TopologyOverride,
} from '@plugboard/topology';
import { GatewayError } from '../errors.js';
import type { PlacementAnswer } from '../sources/kubelet-topology.js';
import type { KubeInput, PodResourcesInput } from './build.js';
import { predictionAvailability, type TopologyInput } from './topology.js';

/** One device-plugin resource as the gateway serves it. */
export interface PredictionResource {
  name: string;
  /** What the kubelet was last told on ListAndWatch, in that order; null while no stream is open. */
  reported: readonly DeviceView[] | null;
  /** The plugin's GetPreferredAllocation policy; null when the plugin does not offer one. */
  preferred: ((available: string[], mustInclude: string[], size: number) => string[]) | null;
}

export interface PredictionInput {
  topology: TopologyInput;
  podResources: PodResourcesInput | null;
  kube: KubeInput | null;
  resources: readonly PredictionResource[];
}

/** A Topology Manager policy/scope to predict under instead of the node's ("" = the node's). */
export type PlacementWhatIf = { topologyManagerPolicy?: string; topologyManagerScope?: string };

/** The fields of a Pod body the prediction reads (the route validated the shape). */
export interface PodBody {
  metadata: { name: string; namespace?: string | undefined };
  spec: { containers: ContainerInput[]; initContainers?: ContainerInput[] | undefined };
}

const CPU_POLICIES: readonly CpuManagerPolicy[] = ['none', 'static'];
const MEMORY_POLICIES: readonly MemoryManagerPolicy[] = ['None', 'Static'];

function oneOf<T extends string>(value: string, allowed: readonly T[]): value is T {
  return (allowed as readonly string[]).includes(value);
}

/** The what-if, validated (400 naming the parameter). */
function override(whatIf: PlacementWhatIf): TopologyOverride {
  const out: TopologyOverride = {};
  const policy = whatIf.topologyManagerPolicy ?? '';
  const scope = whatIf.topologyManagerScope ?? '';
  if (policy) {
    if (!oneOf(policy, TOPOLOGY_MANAGER_POLICIES))
      throw new GatewayError(
        'bad-request',
        `topologyManagerPolicy must be one of ${TOPOLOGY_MANAGER_POLICIES.join(', ')}; got "${policy}"`,
      );
    out.policy = policy;
  }
  if (scope) {
    if (!oneOf(scope, TOPOLOGY_MANAGER_SCOPES))
      throw new GatewayError(
        'bad-request',
        `topologyManagerScope must be one of ${TOPOLOGY_MANAGER_SCOPES.join(', ')}; got "${scope}"`,
      );
    out.scope = scope;
  }
  return out;
}

const unavailable = (why: string) => new GatewayError('unavailable', `placement cannot be predicted: ${why}`);

/** The body's containers as the resource managers read them (422 naming the field when invalid). */
function podRequests(pod: PodBody): PodRequests {
  const name = pod.metadata.name;
  try {
    return {
      uid: `prediction-${randomBytes(8).toString('hex')}`,
      initContainers: (pod.spec.initContainers ?? []).map((c, i) =>
        containerRequests(name, c, `spec.initContainers[${i}]`, true),
      ),
      containers: pod.spec.containers.map((c, i) =>
        containerRequests(name, c, `spec.containers[${i}]`, false),
      ),
    };
  } catch (err) {
    if (err instanceof TopologyError) throw new GatewayError('invalid-body', err.message, { cause: err });
    throw err;
  }
}

const nodeIds = (t: { nodes: readonly { ID: number }[] } | undefined): number[] =>
  (t?.nodes ?? []).map((n) => Number(n.ID));

/**
 * The device manager as the kubelet holds it: every resource's devices (in ListAndWatch order), the
 * healthy ones, those allocated per PodResources, plus what this prediction allocates as it goes.
 */
class PredictedDevices implements DeviceHintProvider {
  private readonly scratch = new Map<string, Set<string>>();
  private readonly held = new Map<string, number>();

  constructor(
    private readonly resources: ReadonlyMap<
      string,
      {
        devices: ReadonlyMap<string, DeviceView>;
        healthy: ReadonlySet<string>;
        preferred: PredictionResource['preferred'];
      }
    >,
    private readonly inUse: ReadonlyMap<string, ReadonlySet<string>>,
  ) {}

  isDevicePluginResource(resource: string): boolean {
    return this.resources.has(resource) || (this.inUse.get(resource)?.size ?? 0) > 0;
  }

  allocatedDevices(resource: string): ReadonlySet<string> {
    return new Set([...(this.inUse.get(resource) ?? []), ...(this.scratch.get(resource) ?? [])]);
  }

  topologyHints(
    resource: string,
    needed: number,
    reusable: ReadonlySet<string>,
    numaIds: readonly number[],
  ): TopologyHint[] | null {
    const r = this.resources.get(resource);
    return generateDeviceTopologyHints(
      r?.devices,
      r?.healthy,
      this.allocatedDevices(resource),
      needed,
      reusable,
      numaIds,
    );
  }

  async allocate(
    podUid: string,
    container: string,
    resource: string,
    needed: number,
    reusable: Set<string>,
    affinity: Mask | null,
  ): Promise<DeviceAllocation | null> {
    const r = this.resources.get(resource);
    const key = `${podUid}/${container}/${resource}`;
    const pick = await devicesToAllocate(
      { podUid, container, resource, required: needed, reusable, affinity },
      {
        existing: this.held.get(key),
        devices: r?.devices,
        healthy: r?.healthy,
        inUse: this.allocatedDevices(resource),
        preferred: (available, mustInclude, size) =>
          Promise.resolve(r?.preferred ? r.preferred(available, mustInclude, size) : null),
      },
    );
    if (!pick) return null;
    this.held.set(key, pick.picked.length);
    this.scratch.set(resource, new Set([...(this.scratch.get(resource) ?? []), ...pick.picked]));
    return {
      resource,
      deviceIds: pick.picked,
      byNuma: devicesByNuma(pick.picked, r?.devices),
      preferred: pick.preferred,
    };
  }
}

/** Node allocatable in the predicate's units: cpu in millicores, memory and hugepages in bytes, counts. */
function allocatableOf(status: Record<string, string> | undefined): Map<string, number> {
  const out = new Map<string, number>();
  for (const [name, q] of Object.entries(status ?? {})) {
    const v = name === 'cpu' ? parseMilliCpu(q) : name === 'pods' ? parseInteger(q) : parseQuantity(q);
    if (v !== undefined) out.set(name, Math.ceil(v));
  }
  return out;
}

/** A pod's requests as the API server has them; null for one the prediction cannot read. */
function requestsOfApiPod(pod: {
  metadata?: { name?: string };
  spec?: { containers?: unknown[]; initContainers?: unknown[] };
}): PodRequests | null {
  try {
    const name = pod.metadata?.name ?? '';
    const parse = (list: unknown[] | undefined, init: boolean) =>
      (list ?? []).map((c, i) => containerRequests(name, c as ContainerInput, `spec.containers[${i}]`, init));
    return {
      uid: name,
      initContainers: parse(pod.spec?.initContainers, true),
      containers: parse(pod.spec?.containers, false),
    };
  } catch {
    return null;
  }
}

/**
 * Predicts the kubelet's admission of `pod` (a dry run: nothing is allocated anywhere). Throws
 * GatewayError 'unavailable' when a needed input is missing, 'bad-request' for a bad what-if,
 * 'invalid-body' for invalid resources.
 */
export async function predictAdmission(
  input: PredictionInput,
  pod: PodBody,
  whatIf: PlacementWhatIf = {},
): Promise<AdmissionView> {
  const t = input.topology;
  const wanted = override(whatIf);
  const available = predictionAvailability(t);
  if (!available.available) throw unavailable(available.reason ?? 'unknown');
  const host = t.host!;
  const settings = t.kubelet!;
  const pr = input.podResources;
  if (!pr) throw unavailable('PodResources has not answered yet');
  const policy = settings.topologyManagerPolicy;
  const scope = settings.topologyManagerScope;
  if (!oneOf(policy, TOPOLOGY_MANAGER_POLICIES))
    throw unavailable(`the kubelet's Topology Manager policy "${policy}" is not one the prediction knows`);
  if (!oneOf(scope, TOPOLOGY_MANAGER_SCOPES))
    throw unavailable(`the kubelet's Topology Manager scope "${scope}" is not one the prediction knows`);
  if (!oneOf(settings.cpuManagerPolicy, CPU_POLICIES))
    throw unavailable(`the kubelet's CPU Manager policy "${settings.cpuManagerPolicy}" is not modelled`);
  if (!oneOf(settings.memoryManagerPolicy, MEMORY_POLICIES))
    throw unavailable(
      `the kubelet's Memory Manager policy "${settings.memoryManagerPolicy}" is not modelled`,
    );
  const spec = podRequests(pod);
  const notes: string[] = [];

  // The machine: sysfs layout; per NUMA node the Memory Manager's allocatable from PodResources
  // (reported under the Static policy), else MemTotal.
  const allocatableMemory = new Map<number, Map<string, number>>();
  for (const m of pr.allocatable.memory) {
    const ids = nodeIds(m.topology);
    if (ids.length !== 1) continue;
    const perNode = allocatableMemory.get(ids[0]!) ?? new Map<string, number>();
    perNode.set(m.memoryType, (perNode.get(m.memoryType) ?? 0) + Number(m.size));
    allocatableMemory.set(ids[0]!, perNode);
  }
  let cpu: CpuManager;
  let memory: MemoryManager;
  try {
    const machine = machineFromLayout(
      host.nodes.map((n) => {
        const mem = allocatableMemory.get(n.id);
        const hugepages: Partial<Record<HugepageResource, number>> = {};
        for (const [type, bytes] of mem ?? [])
          if (type.startsWith('hugepages-')) hugepages[type as HugepageResource] = bytes;
        return {
          id: n.id,
          cpuIds: n.cpuIds,
          memoryBytes: mem?.get('memory') ?? n.memTotalBytes ?? 0,
          hugepages,
        };
      }),
      host.siblings,
    );
    // Reserved CPUs: what PodResources leaves out of the allocatable CPUs under the static policy
    // (however the kubelet chose them), else configz's reservedSystemCPUs.
    const allocatableCpus = new Set(pr.allocatable.cpuIds.map(Number));
    const allCpus = host.nodes.flatMap((n) => n.cpuIds);
    const reserved =
      allocatableCpus.size > 0 ? allCpus.filter((c) => !allocatableCpus.has(c)) : settings.reservedCpuIds;
    cpu = new CpuManager(machine, settings.cpuManagerPolicy, reserved);
    memory = new MemoryManager(machine, settings.memoryManagerPolicy);
  } catch (err) {
    if (err instanceof TopologyError) throw unavailable(err.message);
    throw err;
  }

  // What is allocated already, per PodResources (app containers and sidecars: the kubelet does not
  // list other init containers, so what they still hold is not seen).
  const inUse = new Map<string, Set<string>>();
  const existing = new Set<string>();
  for (const p of pr.pods) {
    const key = `${p.namespace}/${p.name}`;
    existing.add(key);
    for (const c of p.containers) {
      cpu.restore(key, c.name, c.cpuIds.map(Number));
      memory.restore(
        key,
        c.name,
        c.memory.map((m) => ({
          type: m.memoryType as MemoryResource,
          bytes: Number(m.size),
          numaNodes: nodeIds(m.topology),
        })),
      );
      for (const d of c.devices) {
        const set = inUse.get(d.resourceName) ?? new Set<string>();
        for (const id of d.deviceIds) set.add(id);
        inUse.set(d.resourceName, set);
      }
    }
  }

  // Devices: the plugins this gateway serves, as the kubelet was told; other plugins' healthy
  // devices as PodResources lists them as allocatable.
  const resources = new Map<
    string,
    {
      devices: Map<string, DeviceView>;
      healthy: Set<string>;
      preferred: PredictionResource['preferred'];
    }
  >();
  for (const r of input.resources) {
    const devices = new Map((r.reported ?? []).map((d) => [d.id, d] as const));
    const healthy = new Set([...devices.values()].filter((d) => d.health === 'Healthy').map((d) => d.id));
    resources.set(r.name, { devices, healthy, preferred: r.preferred });
    if (!r.reported) notes.push(`${r.name}: the kubelet holds no ListAndWatch stream of its plugin now`);
  }
  const foreign = new Set<string>();
  for (const d of pr.allocatable.devices) {
    if (input.resources.some((r) => r.name === d.resourceName)) continue;
    let r = resources.get(d.resourceName);
    if (!r) {
      r = { devices: new Map(), healthy: new Set(), preferred: null };
      resources.set(d.resourceName, r);
      foreign.add(d.resourceName);
    }
    for (const id of d.deviceIds) {
      const prev = r.devices.get(id);
      r.devices.set(id, {
        id,
        health: 'Healthy',
        numaNodes: [...(prev?.numaNodes ?? []), ...nodeIds(d.topology)],
      });
      r.healthy.add(id);
    }
  }
  for (const name of foreign) {
    notes.push(
      `${name} is served by a plugin outside this gateway: its healthy devices come from PodResources and its preferred allocation is not known`,
    );
  }
  const devices = new PredictedDevices(resources, inUse);

  const admission = new TopologyAdmission({
    policy,
    scope,
    numaIds: host.nodes.map((n) => n.id),
    deviceManager: devices,
    cpuManager: cpu,
    memoryManager: memory,
  });
  let decision;
  try {
    decision = admission.newDecision(true, wanted);
  } catch (err) {
    if (err instanceof TopologyError) throw new GatewayError('bad-request', err.message, { cause: err });
    throw err;
  }
  const view = (): AdmissionView => ({ source: 'prediction', ...decision, notes });
  const key = `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`;
  if (
    existing.has(key) ||
    input.kube?.pods.some((p) => `${p.metadata?.namespace}/${p.metadata?.name}` === key)
  ) {
    decision.result = 'rejected';
    decision.reason = 'AlreadyExists';
    decision.message = `pods "${pod.metadata.name}" already exists`;
    return view();
  }
  try {
    await admission.admit(spec, qosClass(spec), decision, true);
    const node = input.kube?.node ?? null;
    if (node) {
      const others = (input.kube?.pods ?? [])
        .filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed')
        .map(requestsOfApiPod)
        .filter((p): p is PodRequests => p !== null);
      checkNodeResources(spec, others, allocatableOf(node.status?.allocatable), devices);
    } else {
      notes.push(
        'the node-resources predicate (OutOfcpu, OutOfmemory, …) was not checked: no Node from the Kubernetes API',
      );
    }
  } catch (err) {
    const rejection = admissionRejection(err);
    decision.result = 'rejected';
    decision.reason = rejection.reason;
    decision.message = rejection.message;
  }
  return view();
}

/** "Try to place" as the HTTP routes use it. */
export interface Placement {
  /** The kubelet's admission of `pod`, predicted (`source: 'prediction'`); nothing is allocated. */
  predict(pod: PodBody, whatIf?: PlacementWhatIf): Promise<AdmissionView>;
  /** Admits `pod` through kubelet-sim's control API (GatewayError 'unavailable' without one). */
  admit(pod: unknown): Promise<PlacementAnswer>;
}

export interface PlacementDeps {
  /** The inputs as they stand; called after `refresh`. */
  input: () => PredictionInput;
  /** Reads PodResources afresh, so a preview starts from the kubelet's current allocations. */
  refresh: () => Promise<void>;
  /** kubelet-sim's admit path; null when there is none (the reason is in the topology input). */
  admit: ((pod: unknown) => Promise<PlacementAnswer>) | null;
}

export function createPlacement(deps: PlacementDeps): Placement {
  return {
    async predict(pod, whatIf) {
      await deps.refresh();
      return predictAdmission(deps.input(), pod, whatIf);
    },
    admit(pod) {
      if (deps.admit) return deps.admit(pod);
      const reason = deps.input().topology.admit.reason ?? 'no kubelet-sim control API';
      return Promise.reject(new GatewayError('unavailable', `a pod cannot be admitted here: ${reason}`));
    },
  };
}
