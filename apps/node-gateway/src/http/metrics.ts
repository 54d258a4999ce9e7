// Prometheus metrics (prom-client), named after the Kubernetes instrumentation guidelines:
// `plugboard_` prefix, base units in the name (`_seconds`, `_total` for counters), `namespace` /
// `pod` / `container` labels for workload attribution. Per-device and per-pod gauges are computed
// from the current snapshot at scrape time, so a flapping device costs nothing between scrapes.
import { getHeapStatistics } from 'node:v8';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { NodeSnapshot } from '../model/types.js';

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

export function createMetrics(snapshot: () => NodeSnapshot) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

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
      for (const d of Object.values(s.devices))
        if (d.faulted) this.set({ node: s.nodeName, resource: d.resource, device: d.id }, 1);
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
  perResource(
    'plugboard_device_plugin_registered',
    'Whether the resource is registered with the kubelet (1) or not (0).',
    (r) => (r.registration.phase === 'registered' ? 1 : 0),
  );
  new Gauge({
    name: 'plugboard_gateway_faults_active',
    help: 'Active simulated faults.',
    registers: [registry],
    collect() {
      this.set(Object.keys(snapshot().faults).length);
    },
  });

  return {
    registry,
    allocateDuration: new Histogram({
      name: 'plugboard_device_plugin_allocate_duration_seconds',
      help: 'Duration of Allocate calls served by the plugins.',
      labelNames: ['resource', 'result'] as const,
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    preferredAllocationDuration: new Histogram({
      name: 'plugboard_device_plugin_preferred_allocation_duration_seconds',
      help: 'Duration of GetPreferredAllocation decisions made by the plugins.',
      labelNames: ['resource'] as const,
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    registrations: new Counter({
      name: 'plugboard_device_plugin_registrations_total',
      help: 'Successful registrations with the kubelet.',
      labelNames: ['resource'] as const,
      registers: [registry],
    }),
    registrationErrors: new Counter({
      name: 'plugboard_device_plugin_registration_errors_total',
      help: 'Failed registration attempts.',
      labelNames: ['resource'] as const,
      registers: [registry],
    }),
    kubeletRestarts: new Counter({
      name: 'plugboard_kubelet_restarts_total',
      help: 'Kubelet restarts detected by the plugins.',
      labelNames: ['resource'] as const,
      registers: [registry],
    }),
    streamClients: new Gauge({
      name: 'plugboard_gateway_stream_clients',
      help: 'Connected WebSocket stream clients.',
      labelNames: ['view'] as const,
      registers: [registry],
    }),
    streamDropped: new Counter({
      name: 'plugboard_gateway_stream_dropped_clients_total',
      help: 'Stream clients closed by the gateway (slow = send queue over the limit).',
      labelNames: ['view', 'reason'] as const,
      registers: [registry],
    }),
    streamPatches: new Counter({
      name: 'plugboard_gateway_stream_patches_total',
      help: 'Patches broadcast on the stream.',
      labelNames: ['view'] as const,
      registers: [registry],
    }),
    podResourcesErrors: new Counter({
      name: 'plugboard_pod_resources_poll_errors_total',
      help: 'Failed PodResources calls, by gRPC method and status code.',
      labelNames: ['method', 'code'] as const,
      registers: [registry],
    }),
    podResourcesDuration: new Histogram({
      name: 'plugboard_pod_resources_poll_duration_seconds',
      help: 'Duration of one PodResources poll (List + GetAllocatableResources).',
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    kubeErrors: new Counter({
      name: 'plugboard_kube_api_errors_total',
      help: 'Errors talking to the Kubernetes API, by operation.',
      labelNames: ['operation'] as const,
      registers: [registry],
    }),
    modelUpdateDuration: new Histogram({
      name: 'plugboard_gateway_model_update_duration_seconds',
      help: 'Time to rebuild the node model, diff it and hand the patch to every stream client.',
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    faultsInjected: new Counter({
      name: 'plugboard_gateway_faults_injected_total',
      help: 'Simulated faults injected.',
      labelNames: ['resource'] as const,
      registers: [registry],
    }),
  };
}

export type GatewayMetrics = ReturnType<typeof createMetrics>;
