// Prometheus metrics (prom-client), named after the Kubernetes instrumentation guidelines:
// `plugboard_` prefix, base units in the name (`_seconds`, `_total` for counters), `namespace` /
// `pod` / `container` labels for workload attribution. Per-device and per-pod gauges are computed
// from the current snapshot at scrape time, so a flapping device costs nothing between scrapes.
//
// Two rules make the metrics usable in a real Prometheus:
// - every series carries `node` (a registry default label), so node identity needs no relabeling,
//   whichever way Prometheus scrapes the gateway (ServiceMonitor, PodMonitor, pod annotations);
// - every label set known in advance exists at 0 before its first event (per served resource, per
//   stream view and reason, per PodResources method and status code). A counter that appears at its
//   first increment has no earlier sample, so `increase()` and `rate()` never count that increment.
import { getHeapStatistics } from 'node:v8';
import { status as grpcStatus } from '@grpc/grpc-js';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { DraClaimPhase, DraDeviceCounts, FaultPhase, NodeSnapshot } from '@plugboard/api';
import type { StreamView } from './stream.js';
import { isOwnResource } from '../model/observed.js';

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/**
 * prom-client defaults left out: gauges named `_total`, which the Prometheus naming rules reserve for
 * counters (`promtool check metrics` fails on them). `sum(nodejs_active_handles)` etc. give the same.
 */
const NON_COUNTER_TOTALS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

const STREAM_VIEWS: readonly StreamView[] = ['full', 'summary'];
const STREAM_DROP_REASONS = ['slow', 'dead', 'protocol'] as const;
const ALLOCATE_RESULTS = ['success', 'error'] as const;
const FAULT_PHASES: readonly FaultPhase[] = ['active', 'pending', 'device-absent', 'failed'];
/**
 * What PodResourcesPoller reports: a missing socket (`stat`, `ENOENT`: the kubelet is down) and any
 * gRPC status of its two calls. Other `stat` errors (not a socket, EACCES) appear when they happen.
 */
const POD_RESOURCES_ERRORS: readonly { method: string; code: string }[] = [
  { method: 'stat', code: 'ENOENT' },
  ...['List', 'GetAllocatableResources'].flatMap((method) =>
    Object.keys(grpcStatus)
      .filter((code) => Number.isNaN(Number(code)) && code !== 'OK')
      .map((code) => ({ method, code })),
  ),
];
/** The operations sources/kube.ts reports errors for. */
const KUBE_API_OPERATIONS = [
  'watch nodes',
  'watch pods',
  'post event',
  'watch resourceslices',
  'watch resourceclaims',
  'watch devicetaintrules',
  'watch unscheduled pods',
];
const DRA_CLAIM_PHASES: readonly DraClaimPhase[] = ['pending', 'allocated', 'reserved', 'prepared'];
const DRA_DEVICE_STATES: readonly (keyof DraDeviceCounts)[] = [
  'published',
  'usable',
  'allocated',
  'free',
  'unhealthy',
  'tainted',
];
const TAINTING = new Set(['NoSchedule', 'NoExecute']);

/** The resources this gateway's plugins serve (the per-plugin series are theirs alone). */
const ownResources = (s: NodeSnapshot) => Object.values(s.resources).filter(isOwnResource);

export function createMetrics(snapshot: () => NodeSnapshot) {
  const registry = new Registry();
  registry.setDefaultLabels({ node: snapshot().nodeName });
  collectDefaultMetrics({ register: registry });
  for (const name of NON_COUNTER_TOTALS) registry.removeSingleMetric(name);

  // Fixed for the life of the process: set once.
  new Gauge({
    name: 'plugboard_gateway_heap_limit_bytes',
    help: "V8's heap size limit of the gateway process (set by NODE_OPTIONS --max-old-space-size).",
    registers: [registry],
  }).set(getHeapStatistics().heap_size_limit);
  new Gauge({
    name: 'plugboard_device_healthy',
    help: 'Whether a device is healthy (1) or unhealthy (0), as advertised by the plugin.',
    labelNames: ['node', 'resource', 'device'] as const,
    registers: [registry],
    collect() {
      this.reset();
      const s = snapshot();
      for (const d of Object.values(s.devices)) {
        this.set({ node: s.nodeName, resource: d.resource, device: d.id }, d.health === 'Healthy' ? 1 : 0);
      }
    },
  });
  new Gauge({
    name: 'plugboard_device_faulted',
    help: 'Whether a simulated fault holds the device unhealthy (1) or not (0).',
    labelNames: ['node', 'resource', 'device'] as const,
    registers: [registry],
    collect() {
      this.reset();
      const s = snapshot();
      for (const d of Object.values(s.devices)) {
        this.set({ node: s.nodeName, resource: d.resource, device: d.id }, d.faulted ? 1 : 0);
      }
    },
  });
  new Gauge({
    name: 'plugboard_container_device_allocations',
    help: 'Devices allocated to a container, per resource (from the kubelet PodResources API).',
    labelNames: ['node', 'namespace', 'pod', 'container', 'resource'] as const,
    registers: [registry],
    collect() {
      this.reset();
      const s = snapshot();
      for (const p of Object.values(s.pods)) {
        for (const c of p.containers) {
          for (const [resource, keys] of Object.entries(c.devices)) {
            this.set(
              { node: s.nodeName, namespace: p.namespace, pod: p.name, container: c.name, resource },
              keys.length,
            );
          }
        }
      }
    },
  });
  const perResource = (name: string, help: string, pick: (r: NodeSnapshot['resources'][string]) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['node', 'resource'] as const,
      registers: [registry],
      collect() {
        this.reset();
        const s = snapshot();
        for (const r of Object.values(s.resources)) this.set({ node: s.nodeName, resource: r.name }, pick(r));
      },
    });
  perResource(
    'plugboard_resource_capacity_devices',
    'Devices advertised for the resource (kubelet capacity).',
    (r) => r.kubelet.capacity,
  );
  perResource(
    'plugboard_resource_allocatable_devices',
    'Allocatable devices as the kubelet reports them.',
    (r) => r.kubelet.allocatable,
  );
  perResource(
    'plugboard_resource_allocated_devices',
    'Devices allocated to containers.',
    (r) => r.kubelet.allocated,
  );
  perResource(
    'plugboard_resource_unhealthy_devices',
    'Unhealthy devices of the resource.',
    (r) => r.kubelet.unhealthy,
  );
  perResource(
    'plugboard_resource_api_server_allocatable_devices',
    'Allocatable devices in the Node status (API server); -1 when unknown.',
    (r) => (r.apiServer ? r.apiServer.allocatable : -1),
  );
  new Gauge({
    name: 'plugboard_device_plugin_registered',
    help: "Whether this gateway's plugin for the resource is registered with the kubelet (1) or not (0).",
    labelNames: ['node', 'resource'] as const,
    registers: [registry],
    collect() {
      this.reset();
      const s = snapshot();
      for (const r of ownResources(s))
        this.set({ node: s.nodeName, resource: r.name }, r.registration.phase === 'registered' ? 1 : 0);
    },
  });
  new Gauge({
    name: 'plugboard_resource_served_by',
    help: "Who serves the resource (1 for its served_by): 'plugin' (this gateway), 'device-plugin' (another device plugin, observed through the kubelet), 'node-status' (only the Node status names it).",
    labelNames: ['node', 'resource', 'served_by'] as const,
    registers: [registry],
    collect() {
      this.reset();
      const s = snapshot();
      for (const r of Object.values(s.resources))
        this.set({ node: s.nodeName, resource: r.name, served_by: r.servedBy ?? 'plugin' }, 1);
    },
  });
  draMetrics(registry, snapshot);
  new Gauge({
    name: 'plugboard_gateway_faults_active',
    help: 'Simulated faults the gateway holds, per resource and state (active: the kubelet was told Unhealthy; pending; device-absent; failed).',
    labelNames: ['resource', 'state'] as const,
    registers: [registry],
    collect() {
      this.reset();
      const s = snapshot();
      for (const name of [...ownResources(s).map((r) => r.name), ...inProcessDrivers(s)])
        for (const state of FAULT_PHASES) this.set({ resource: name, state }, 0);
      for (const f of Object.values(s.faults)) this.inc({ resource: f.resource, state: f.state });
    },
  });

  // --- per-resource counters and histograms, zero-initialised once per resource
  const allocateDuration = new Histogram({
    name: 'plugboard_device_plugin_allocate_duration_seconds',
    help: 'Duration of Allocate calls served by the plugins.',
    labelNames: ['resource', 'result'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
    collect: () => initServedResources(),
  });
  const preferredAllocationDuration = new Histogram({
    name: 'plugboard_device_plugin_preferred_allocation_duration_seconds',
    help: 'Duration of GetPreferredAllocation decisions made by the plugins.',
    labelNames: ['resource'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
    collect: () => initServedResources(),
  });
  const registrations = new Counter({
    name: 'plugboard_device_plugin_registrations_total',
    help: 'Successful registrations with the kubelet.',
    labelNames: ['resource'] as const,
    registers: [registry],
    collect: () => initServedResources(),
  });
  const registrationErrors = new Counter({
    name: 'plugboard_device_plugin_registration_errors_total',
    help: 'Failed registration attempts.',
    labelNames: ['resource'] as const,
    registers: [registry],
    collect: () => initServedResources(),
  });
  const pluginKubeletRestarts = new Counter({
    name: 'plugboard_device_plugin_kubelet_restarts_total',
    help: "Kubelet restarts detected by the resource's plugin.",
    labelNames: ['resource'] as const,
    registers: [registry],
    collect: () => initServedResources(),
  });
  const faultsInjected = new Counter({
    name: 'plugboard_gateway_faults_injected_total',
    help: 'Simulated faults injected.',
    labelNames: ['resource'] as const,
    registers: [registry],
    collect: () => initServedResources(),
  });
  const initialised = new Set<string>();
  /**
   * Creates the resource's series at 0, once. Runs at every scrape for the resources the gateway
   * serves and before every recording, so a histogram's `zero()` never wipes an observation.
   */
  const initResource = (resource: string): void => {
    if (initialised.has(resource)) return;
    initialised.add(resource);
    for (const result of ALLOCATE_RESULTS) allocateDuration.zero({ resource, result });
    preferredAllocationDuration.zero({ resource });
    for (const counter of [registrations, registrationErrors, pluginKubeletRestarts, faultsInjected]) {
      counter.inc({ resource }, 0);
    }
  };
  const initServedResources = (): void => {
    const s = snapshot();
    for (const r of ownResources(s)) initResource(r.name);
    // A DRA driver takes faults too (and nothing else these series count).
    for (const driver of inProcessDrivers(s)) faultsInjected.inc({ resource: driver }, 0);
  };

  // One kubelet per node: every plugin sees each of its restarts, so the node's count is the
  // highest count any one resource has seen (a resource that misses one does not add a restart).
  const kubeletRestarts = new Counter({
    name: 'plugboard_kubelet_restarts_total',
    help: 'Kubelet restarts on this node, detected by the plugins (counted once per restart).',
    registers: [registry],
  });
  const restartsSeen = new Map<string, number>();
  let nodeRestarts = 0;

  // --- label sets known in advance
  const streamClients = new Gauge({
    name: 'plugboard_gateway_stream_clients',
    help: 'Connected WebSocket stream clients.',
    labelNames: ['view'] as const,
    registers: [registry],
  });
  const streamDropped = new Counter({
    name: 'plugboard_gateway_stream_dropped_clients_total',
    help: 'Stream clients closed by the gateway (slow = send queue over the limit).',
    labelNames: ['view', 'reason'] as const,
    registers: [registry],
  });
  const streamPatches = new Counter({
    name: 'plugboard_gateway_stream_patches_total',
    help: 'Patches broadcast on the stream.',
    labelNames: ['view'] as const,
    registers: [registry],
  });
  for (const view of STREAM_VIEWS) {
    streamClients.set({ view }, 0);
    streamPatches.inc({ view }, 0);
    for (const reason of STREAM_DROP_REASONS) streamDropped.inc({ view, reason }, 0);
  }
  const podResourcesErrors = new Counter({
    name: 'plugboard_pod_resources_poll_errors_total',
    help: 'Failed PodResources calls, by gRPC method and status code.',
    labelNames: ['method', 'code'] as const,
    registers: [registry],
  });
  for (const labels of POD_RESOURCES_ERRORS) podResourcesErrors.inc(labels, 0);
  const kubeErrors = new Counter({
    name: 'plugboard_kube_api_errors_total',
    help: 'Errors talking to the Kubernetes API, by operation.',
    labelNames: ['operation'] as const,
    registers: [registry],
  });
  for (const operation of KUBE_API_OPERATIONS) kubeErrors.inc({ operation }, 0);

  return {
    registry,
    allocateDuration: {
      observe(labels: { resource: string; result: (typeof ALLOCATE_RESULTS)[number] }, seconds: number) {
        initResource(labels.resource);
        allocateDuration.observe(labels, seconds);
      },
    },
    preferredAllocationDuration: {
      observe(labels: { resource: string }, seconds: number) {
        initResource(labels.resource);
        preferredAllocationDuration.observe(labels, seconds);
      },
    },
    registrations: {
      inc(labels: { resource: string }) {
        initResource(labels.resource);
        registrations.inc(labels);
      },
    },
    registrationErrors: {
      inc(labels: { resource: string }) {
        initResource(labels.resource);
        registrationErrors.inc(labels);
      },
    },
    /** A plugin saw a kubelet restart: counted per resource, and once per restart for the node. */
    kubeletRestarts: {
      inc(labels: { resource: string }) {
        initResource(labels.resource);
        pluginKubeletRestarts.inc(labels);
        const seen = (restartsSeen.get(labels.resource) ?? 0) + 1;
        restartsSeen.set(labels.resource, seen);
        if (seen > nodeRestarts) {
          kubeletRestarts.inc(seen - nodeRestarts);
          nodeRestarts = seen;
        }
      },
    },
    faultsInjected: {
      inc(labels: { resource: string }) {
        const r = snapshot().resources[labels.resource];
        if (r && isOwnResource(r)) initResource(labels.resource);
        faultsInjected.inc(labels);
      },
    },
    streamClients,
    streamDropped,
    streamPatches,
    podResourcesErrors,
    podResourcesDuration: new Histogram({
      name: 'plugboard_pod_resources_poll_duration_seconds',
      help: 'Duration of one PodResources poll (List + GetAllocatableResources).',
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    kubeErrors,
    modelUpdateDuration: new Histogram({
      name: 'plugboard_gateway_model_update_duration_seconds',
      help: 'Time to rebuild the node model, diff it and hand the patch to every stream client.',
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
  };
}

export type GatewayMetrics = ReturnType<typeof createMetrics>;

const inProcessDrivers = (s: NodeSnapshot): string[] =>
  Object.values(s.dra?.drivers ?? {})
    .filter((d) => d.inProcess)
    .map((d) => d.name);

/**
 * DRA gauges, computed from the snapshot at scrape time like the device-plugin ones: per device
 * (health, taints, faults), per driver (the honest counts of snapshot.dra and registration) and per
 * claim (phases, health as allocatedResourcesStatus reports it).
 */
function draMetrics(registry: Registry, snapshot: () => NodeSnapshot): void {
  const perDevice = (
    name: string,
    help: string,
    value: (d: NonNullable<NodeSnapshot['dra']>['devices'][string]) => number,
  ) =>
    new Gauge({
      name,
      help,
      labelNames: ['node', 'driver', 'pool', 'device'] as const,
      registers: [registry],
      collect() {
        this.reset();
        const s = snapshot();
        for (const d of Object.values(s.dra?.devices ?? {})) {
          this.set({ node: s.nodeName, driver: d.driver, pool: d.pool, device: d.name }, value(d));
        }
      },
    });
  perDevice(
    'plugboard_dra_device_healthy',
    'Whether a DRA device is healthy (1) or not (0: Unhealthy or Unknown), as its driver reports it.',
    (d) => (d.health === 'Healthy' ? 1 : 0),
  );
  perDevice(
    'plugboard_dra_device_tainted',
    'Whether a DRA device carries a NoSchedule or NoExecute taint (ResourceSlice or DeviceTaintRule).',
    (d) => (d.taints.some((t) => TAINTING.has(t.effect)) ? 1 : 0),
  );
  perDevice(
    'plugboard_dra_device_faulted',
    'Whether a simulated fault holds the DRA device and the kubelet was sent Unhealthy (1) or not (0).',
    (d) => (d.fault === 'active' ? 1 : 0),
  );
  new Gauge({
    name: 'plugboard_dra_devices',
    help: 'DRA devices of a driver on this node by state: published, usable (healthy, untainted), allocated, free, unhealthy, tainted.',
    labelNames: ['node', 'driver', 'state'] as const,
    registers: [registry],
    collect() {
      this.reset();
      const s = snapshot();
      for (const d of Object.values(s.dra?.drivers ?? {}))
        for (const state of DRA_DEVICE_STATES)
          this.set({ node: s.nodeName, driver: d.name, state }, d.counts[state]);
    },
  });
  new Gauge({
    name: 'plugboard_dra_driver_registered',
    help: 'Whether a DRA driver the gateway runs is registered with the kubelet (1) or not (0).',
    labelNames: ['node', 'driver'] as const,
    registers: [registry],
    collect() {
      this.reset();
      const s = snapshot();
      for (const d of Object.values(s.dra?.drivers ?? {})) {
        if (d.registration)
          this.set({ node: s.nodeName, driver: d.name }, d.registration.phase === 'registered' ? 1 : 0);
      }
    },
  });
  new Gauge({
    name: 'plugboard_dra_claims',
    help: "ResourceClaims of this node's pods and devices by phase: pending, allocated, reserved, prepared.",
    labelNames: ['node', 'phase'] as const,
    registers: [registry],
    collect() {
      this.reset();
      const s = snapshot();
      for (const phase of DRA_CLAIM_PHASES) this.set({ node: s.nodeName, phase }, 0);
      for (const c of Object.values(s.dra?.claims ?? {})) this.inc({ node: s.nodeName, phase: c.phase });
    },
  });
  new Gauge({
    name: 'plugboard_dra_claim_healthy',
    help: "Whether all devices of a ResourceClaim are healthy (1) or not (0), as the pods' allocatedResourcesStatus reports them; absent while unreported.",
    labelNames: ['node', 'namespace', 'claim'] as const,
    registers: [registry],
    collect() {
      this.reset();
      const s = snapshot();
      for (const c of Object.values(s.dra?.claims ?? {})) {
        if (c.health !== null)
          this.set(
            { node: s.nodeName, namespace: c.namespace, claim: c.name },
            c.health === 'Healthy' ? 1 : 0,
          );
      }
    },
  });
}
