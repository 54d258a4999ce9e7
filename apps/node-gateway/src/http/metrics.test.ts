// The gateway's metrics as Prometheus needs them: every series labelled with the node, every known
// label set present at 0 before its first event, one kubelet restart counted once for the node
// however many plugins saw it, and no default metric that breaks the naming rules.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { NodeSnapshot } from '@plugboard/api';
import { createMetrics } from './metrics.js';

const GPU = 'plugboard.example/gpu';
const NIC = 'plugboard.example/nic';

/** The parts of a snapshot the metrics read: two registered resources, one faulted GPU. */
function snapshot(): NodeSnapshot {
  const resource = (name: string, capacity: number) => ({
    name,
    kubelet: { capacity, allocatable: capacity, allocated: 0, unhealthy: 0 },
    apiServer: null,
    registration: { phase: 'registered' },
  });
  return {
    nodeName: 'node-a',
    resources: { [GPU]: resource(GPU, 2), [NIC]: resource(NIC, 1) },
    devices: {
      [`${GPU}/gpu-0`]: { resource: GPU, id: 'gpu-0', health: 'Unhealthy', faulted: true },
      [`${GPU}/gpu-1`]: { resource: GPU, id: 'gpu-1', health: 'Healthy', faulted: false },
      [`${NIC}/nic-0`]: { resource: NIC, id: 'nic-0', health: 'Healthy', faulted: false },
    },
    pods: {},
    faults: { f1: { resource: GPU, deviceId: 'gpu-0', state: 'active' } },
  } as unknown as NodeSnapshot;
}

/** `name{labels}` → value, labels sorted, of every sample of the exposition. */
async function samples(metrics: ReturnType<typeof createMetrics>): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const line of (await metrics.registry.metrics()).split('\n')) {
    const m = /^(\w+)\{(.*)\} (\S+)$/.exec(line);
    if (!m) continue;
    const labels = m[2]!
      .split(/,(?=\w+=")/)
      .sort()
      .join(',');
    out.set(`${m[1]}{${labels}}`, Number(m[3]));
  }
  return out;
}

describe('gateway metrics', () => {
  it('label every series with the node, process and Node.js defaults included', async () => {
    const text = await createMetrics(snapshot).registry.metrics();
    const lines = text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
    assert.ok(lines.length > 50);
    for (const line of lines) assert.match(line, /\{(.*,)?node="node-a"(,.*)?\} /, line);
    assert.match(text, /^process_cpu_seconds_total\{node="node-a"\} /m);
    assert.match(text, /^nodejs_heap_size_used_bytes\{node="node-a"\} /m);
    // Gauges named like counters fail `promtool check metrics`: left out.
    assert.doesNotMatch(text, /^# TYPE \w+_total gauge$/m);
  });

  it('start every known label set at 0: per served resource, stream view and reason, PodResources call', async () => {
    const s = await samples(createMetrics(snapshot));
    for (const resource of [GPU, NIC]) {
      for (const name of [
        'plugboard_device_plugin_registrations_total',
        'plugboard_device_plugin_registration_errors_total',
        'plugboard_device_plugin_kubelet_restarts_total',
        'plugboard_gateway_faults_injected_total',
        'plugboard_device_plugin_preferred_allocation_duration_seconds_count',
      ]) {
        assert.equal(s.get(`${name}{node="node-a",resource="${resource}"}`), 0, `${name} ${resource}`);
      }
      for (const result of ['success', 'error']) {
        assert.equal(
          s.get(
            `plugboard_device_plugin_allocate_duration_seconds_count{node="node-a",resource="${resource}",result="${result}"}`,
          ),
          0,
        );
      }
    }
    assert.equal(s.get('plugboard_kubelet_restarts_total{node="node-a"}'), 0);
    for (const view of ['full', 'summary']) {
      assert.equal(s.get(`plugboard_gateway_stream_clients{node="node-a",view="${view}"}`), 0);
      for (const reason of ['slow', 'dead', 'protocol']) {
        assert.equal(
          s.get(
            `plugboard_gateway_stream_dropped_clients_total{node="node-a",reason="${reason}",view="${view}"}`,
          ),
          0,
        );
      }
    }
    assert.equal(
      s.get('plugboard_pod_resources_poll_errors_total{code="ENOENT",method="stat",node="node-a"}'),
      0,
    );
    assert.equal(
      s.get('plugboard_pod_resources_poll_errors_total{code="UNAVAILABLE",method="List",node="node-a"}'),
      0,
    );
    // Gauges: faults per resource (0 where there are none), faulted 0 or 1 for every device.
    const faults = (resource: string, state: string) =>
      s.get(`plugboard_gateway_faults_active{node="node-a",resource="${resource}",state="${state}"}`);
    assert.equal(faults(GPU, 'active'), 1);
    for (const state of ['pending', 'device-absent', 'failed']) assert.equal(faults(GPU, state), 0, state);
    for (const state of ['active', 'pending', 'device-absent', 'failed']) assert.equal(faults(NIC, state), 0);
    assert.equal(s.get(`plugboard_device_faulted{device="gpu-0",node="node-a",resource="${GPU}"}`), 1);
    assert.equal(s.get(`plugboard_device_faulted{device="gpu-1",node="node-a",resource="${GPU}"}`), 0);
  });

  it('keep what was recorded before the first scrape', async () => {
    const metrics = createMetrics(snapshot);
    metrics.allocateDuration.observe({ resource: GPU, result: 'success' }, 0.002);
    metrics.faultsInjected.inc({ resource: GPU });
    const s = await samples(metrics);
    const count = `plugboard_device_plugin_allocate_duration_seconds_count{node="node-a",resource="${GPU}",result="success"}`;
    assert.equal(s.get(count), 1);
    assert.equal(s.get(`plugboard_gateway_faults_injected_total{node="node-a",resource="${GPU}"}`), 1);
    assert.equal((await samples(metrics)).get(count), 1, 'a second scrape does not zero it either');
  });

  it('count a kubelet restart once for the node, whichever plugins saw it', async () => {
    const metrics = createMetrics(snapshot);
    // Three restarts, each seen by both plugins, in the order their watchers fire.
    for (let i = 0; i < 3; i++) {
      metrics.kubeletRestarts.inc({ resource: i % 2 ? NIC : GPU });
      metrics.kubeletRestarts.inc({ resource: i % 2 ? GPU : NIC });
    }
    let s = await samples(metrics);
    assert.equal(s.get('plugboard_kubelet_restarts_total{node="node-a"}'), 3);
    assert.equal(s.get(`plugboard_device_plugin_kubelet_restarts_total{node="node-a",resource="${GPU}"}`), 3);
    // A restart only one plugin noticed is still one restart.
    metrics.kubeletRestarts.inc({ resource: GPU });
    s = await samples(metrics);
    assert.equal(s.get('plugboard_kubelet_restarts_total{node="node-a"}'), 4);
    assert.equal(s.get(`plugboard_device_plugin_kubelet_restarts_total{node="node-a",resource="${NIC}"}`), 3);
  });
});
