// Runs one fidelity scenario on one kind of TestCluster: a node of its own (kubelet-sim shaped like
// this machine and configured like the real test nodes, or a real kubelet), Plugboard's device
// plugins and DRA drivers on it (the library, in this process), then the steps — objects through the
// real kubectl, waits through `kubectl wait` (a watch), faults through the plugins' fault overlay —
// observing where the scenario says. Returns the observations, normalised (normalise.ts).
import { once } from 'node:events';
import { mkdirSync, readdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import {
  DraDriver,
  evenPartitions,
  kubeApiFromKubeConfig,
  parsePluginConfig,
  SimulatedSource,
  startPlugins,
  type DraDriverOptions,
  type PluginRuntime,
} from '@plugboard/plugin';
import { removeDraObjects } from '../dra-cleanup.js';
import { podResourcesClient } from '../pod-resources.js';
import type { RealCluster } from '../real-cluster.js';
import type { SimCluster } from '../sim-cluster.js';
import type { ClusterNode, TestNamespace } from '../test-node.js';
import { PAUSE_IMAGE } from '../pod.js';
import { waitFor } from '../wait.js';
import { normalise, type NormaliseContext } from './normalise.js';
import { observe } from './observe.js';
import type { Scenario, ScenarioDraDriver } from './scenario.js';

export interface ScenarioOutcome {
  /** Normalised observations by label, plus `errors` (the rejected applies' kubectl errors). */
  observations: Record<string, unknown>;
  ms: number;
}

const CLUSTER_SCOPED = new Set(['DeviceClass', 'ResourceSlice', 'DeviceTaintRule', 'Namespace', 'Node']);

/** The NUMA nodes of this machine (what the real kubelet reads through cAdvisor). */
function machineNumaNodes(): number {
  try {
    return Math.max(1, readdirSync('/sys/devices/system/node').filter((n) => /^node\d+$/.test(n)).length);
  } catch {
    return 1;
  }
}

function substitute(value: unknown, vars: Record<string, string>): unknown {
  let text = JSON.stringify(value);
  for (const [k, v] of Object.entries(vars)) text = text.split(`{{${k}}}`).join(v);
  return JSON.parse(text);
}

/** An applied object made concrete: its namespace, and for a Pod this node and an image. */
function concrete(obj: Record<string, unknown>, ns: string, node: string): Record<string, unknown> {
  const o = structuredClone(obj) as {
    kind: string;
    metadata: { namespace?: string };
    spec?: { nodeSelector?: Record<string, string>; containers?: { image?: string }[] };
  };
  if (!CLUSTER_SCOPED.has(o.kind)) o.metadata.namespace ??= ns;
  if (o.kind === 'Pod' && o.spec) {
    o.spec.nodeSelector ??= { 'kubernetes.io/hostname': node };
    for (const c of o.spec.containers ?? []) c.image ??= PAUSE_IMAGE;
  }
  return o;
}

function draDriverOf(
  spec: ScenarioDraDriver,
  common: Omit<DraDriverOptions, 'driverName' | 'source'>,
): DraDriver {
  const attributes = spec.attributes;
  return new DraDriver({
    ...common,
    driverName: spec.driver,
    source: new SimulatedSource({
      count: spec.count,
      idPrefix: spec.idPrefix,
      ...(spec.numaNodes ? { numaNodes: spec.numaNodes } : {}),
    }),
    cdi: { class: 'gpu' },
    faultTaints: spec.faultTaints,
    ...(attributes ? { attributes: () => attributes } : {}),
    ...(spec.partitions
      ? {
          partitions: {
            counters: () => ({ memory: spec.partitions!.memory }),
            partitions: evenPartitions({ memory: spec.partitions.memory }, spec.partitions.splits),
          },
        }
      : {}),
    ...(spec.shared
      ? {
          allowMultipleAllocations: true,
          capacity: () => ({
            memory: {
              value: spec.shared!.memory,
              requestPolicy: {
                default: spec.shared!.default,
                validRange: {
                  min: spec.shared!.min,
                  ...(spec.shared!.step ? { step: spec.shared!.step } : {}),
                },
              },
            },
          }),
        }
      : {}),
    ...(spec.prepareFails
      ? {
          prepare: () => Promise.reject(new Error(spec.prepareFails)),
        }
      : {}),
  });
}

export async function runScenario(
  scenario: Scenario,
  cluster: SimCluster | RealCluster,
  work: string,
): Promise<ScenarioOutcome> {
  const started = Date.now();
  mkdirSync(work, { recursive: true });
  const policy = scenario.node.topologyManagerPolicy;
  let node: ClusterNode | undefined;
  let ns: TestNamespace | undefined;
  let runtime: PluginRuntime | undefined;
  const drivers = new Map<string, DraDriver>();
  const clusterScoped: string[] = [];
  const podResources: { close(): void }[] = [];
  try {
    node =
      cluster.kind === 'sim'
        ? await cluster.addNode('fid', {
            // Shaped like this machine and configured like the real test nodes
            // (packages/local-cluster/src/kubelet-config.ts: no CPU or Memory Manager policy).
            sim: {
              cpus: cpus().length,
              numaNodes: machineNumaNodes(),
              memoryPerNumaBytes: Math.floor(totalmem() / machineNumaNodes()),
              cpuManagerPolicy: 'none',
              memoryManagerPolicy: 'None',
              topologyManagerPolicy: policy ?? 'none',
            },
          })
        : await cluster.addNode('fid', policy ? { topologyManagerPolicy: policy } : {});
    ns = await cluster.namespace('fid');
    const nodeName = node.name;
    /** This node's ResourceSlices: driver, UID and device count. */
    const nodeSlices = async () =>
      (
        await cluster.kubectlJson<{
          items: { metadata: { uid: string }; spec: { driver: string; devices?: unknown[] } }[];
        }>(['get', 'resourceslices', '--field-selector', `spec.nodeName=${nodeName}`])
      ).items.map((x) => ({
        uid: x.metadata.uid,
        driver: x.spec.driver,
        devices: x.spec.devices?.length ?? 0,
      }));
    /** Every DRA driver's devices published, in slices none of whose UIDs is in `gone`. */
    const slicesPublished = (gone: ReadonlySet<string> = new Set()) =>
      waitFor(
        gone.size
          ? 'the kubelet’s start-up wipe of the node’s ResourceSlices, and every DRA driver’s again'
          : 'every DRA driver’s ResourceSlices',
        async () => {
          const slices = await nodeSlices();
          return (
            !slices.some((x) => gone.has(x.uid)) &&
            scenario.draDrivers.every((d) => slices.some((x) => x.driver === d.driver && x.devices > 0))
          );
        },
        // A driver repairs slices someone else deleted at its next resync: 30 s, as upstream's.
        90_000,
      );
    // The node lifecycle controller's RegisteredNode comes a moment after the Node on the real
    // cluster (kubelet-sim records it at once): every scenario starts once it is there.
    await waitFor(`the RegisteredNode event of ${nodeName}`, async () => {
      const list = await cluster.kubectlJson<{
        items: { reason?: string; involvedObject: { kind: string; name: string } }[];
      }>(['get', 'events', '-n', 'default']);
      return list.items.some(
        (e) =>
          e.reason === 'RegisteredNode' &&
          e.involvedObject.kind === 'Node' &&
          e.involvedObject.name === nodeName,
      );
    });
    const vars = { ns: ns.name, node: node.name, work };
    const ctx: NormaliseContext = { node: node.name, namespace: ns.name, work };
    for (const f of scenario.files) writeFileSync(join(work, f), '');

    if (scenario.devicePlugins.length > 0) {
      runtime = await startPlugins(
        parsePluginConfig({ resources: substitute(scenario.devicePlugins, vars) }, scenario.file),
        { devicePluginDir: node.devicePluginDir, cdiDir: join(work, 'cdi') },
      );
      for (const p of runtime.resources.values())
        if (p.registration().phase !== 'registered') await once(p, 'registered');
      // Pods are applied once the devices are on the Node, so that the real scheduler does not see
      // the resource before the kubelet's next status update (kubelet-sim updates it at once).
      for (const p of runtime.resources.values()) {
        const healthy = p.devices().filter((d) => d.health === 'Healthy').length;
        await cluster.kubectl([
          'wait',
          `node/${node.name}`,
          `--for=jsonpath={.status.allocatable.${p.resourceName.replaceAll('.', '\\.')}}=${healthy}`,
          '--timeout=60s',
        ]);
      }
    }
    if (scenario.draDrivers.length > 0) {
      const kube = await kubeApiFromKubeConfig({ kubeconfig: cluster.adminKubeconfig(node) });
      for (const spec of scenario.draDrivers) {
        const d = draDriverOf(spec, {
          nodeName: node.name,
          kube,
          pluginsDir: node.pluginsDir,
          pluginsRegistryDir: node.pluginsRegistryDir,
          cdiDir: join(work, 'cdi'),
        });
        drivers.set(spec.driver, d);
        await d.start();
      }
      await waitFor('the kubelet to register every DRA driver', () =>
        [...drivers.values()].every((d) => d.registration().phase === 'registered'),
      );
      // Pods are applied once every driver's devices are published, so neither scheduler has to
      // wait for them (the real one would retry with a back-off, kubelet-sim at once).
      await slicesPublished();
    }

    const pr = podResourcesClient(node.podResourcesSocket);
    podResources.push(pr);
    const resources = scenario.devicePlugins.map((p) => p.name);
    const observations: Record<string, unknown> = {};
    const errors: Record<string, string> = {};
    const waits: Record<string, string> = {};
    const generated = new Set<string>();
    const kubectl = (args: string[], input?: string) =>
      cluster.kubectl(args, input === undefined ? {} : { input });

    for (const step of scenario.steps) {
      if ('apply' in step) {
        const items = (substitute(step.apply, vars) as Record<string, unknown>[]).map((o) =>
          concrete(o, ns!.name, node!.name),
        );
        for (const o of items) {
          const meta = o['metadata'] as { name?: string };
          if (CLUSTER_SCOPED.has(o['kind'] as string) && meta.name)
            clusterScoped.push(`${o['kind'] as string}/${meta.name}`);
        }
        const input = JSON.stringify({ apiVersion: 'v1', kind: 'List', items });
        if (step.rejected === undefined) await kubectl(['apply', '-f', '-'], input);
        else {
          const err = await kubectl(['apply', '-f', '-'], input).then(
            () => new Error(`${step.rejected}: the API server accepted the objects`),
            (e: Error) => e.message,
          );
          if (err instanceof Error) throw err;
          errors[step.rejected] = err;
        }
      } else if ('delete' in step) {
        await kubectl(['delete', '-n', ns.name, String(substitute(step.delete, vars)), '--timeout=60s']);
      } else if ('wait' in step) {
        const object =
          step.wait.object === 'node' ? `node/${node.name}` : String(substitute(step.wait.object, vars));
        const met = await kubectl([
          'wait',
          '-n',
          ns.name,
          object,
          `--for=${String(substitute(step.wait.for, vars))}`,
          `--timeout=${step.wait.timeoutSeconds}s`,
        ]).then(
          () => 'met',
          // A wait one kind never meets is an outcome too (compared, so listed or fixed), not an
          // abort: the scenario goes on and the next observation shows where the kinds parted.
          (err: Error) => (/timed out/.test(err.message) ? 'timed out' : Promise.reject(err)),
        );
        waits[`${step.wait.object} ${step.wait.for}`] = met;
      } else if ('event' in step) {
        const [kind, name] = String(substitute(step.event.object, vars)).split('/');
        const e = step.event;
        await waitFor(
          `${scenario.name} on ${cluster.kind}: an Event ${e.reason} about ${e.object}`,
          async () => {
            const list = await cluster.kubectlJson<{
              items: { reason?: string; involvedObject: { kind: string; name: string } }[];
            }>(['get', 'events', '-n', ns!.name]);
            return list.items.some(
              (x) =>
                x.reason === e.reason &&
                x.involvedObject.name === name &&
                x.involvedObject.kind.toLowerCase() === kind?.toLowerCase(),
            );
          },
          e.timeoutSeconds * 1000,
          250,
        );
      } else if ('fault' in step || 'clearFault' in step) {
        const t = 'fault' in step ? step.fault : step.clearFault;
        if (t.resource !== undefined) {
          const p = runtime!.resources.get(t.resource)!;
          if ('fault' in step) p.injectFault(t.device, step.fault.reason, { absentOk: true });
          else p.clearFault(t.device);
        } else {
          const d = drivers.get(t.driver!)!;
          if ('fault' in step)
            d.injectFault(t.device, step.fault.reason, step.fault.taint ? { taint: step.fault.taint } : {});
          else d.clearFault(t.device);
        }
      } else if ('restartKubelet' in step) {
        const registered = [...(runtime?.resources.values() ?? [])].map((p) => once(p, 'registered'));
        const before = new Set((await nodeSlices()).map((x) => x.uid));
        const podsOf = (l: { podResources: { namespace: string; name: string }[] }) =>
          l.podResources.filter((p) => p.namespace === ns!.name).map((p) => p.name);
        const listed = podsOf(await pr.list());
        await node.restartKubelet();
        await Promise.all(registered);
        // The pods' Ready condition in the API server is still the old kubelet's: what the new one
        // knows shows in PodResources once its pod manager has the pods back from the API server.
        await waitFor('the restarted kubelet to list its pods in PodResources again', async () => {
          const now = new Set(podsOf(await pr.list().catch(() => ({ podResources: [] }))));
          return listed.every((p) => now.has(p));
        });
        await waitFor('the DRA drivers registered again', () =>
          [...drivers.values()].every((d) => d.registration().phase === 'registered'),
        );
        // A starting kubelet deletes every ResourceSlice of its node (DRAPluginManager's start-up
        // wipe: no driver is usable until it registers again); the real one does it in the
        // background, possibly after the driver registered again, which then publishes at its next
        // resync. Observe once that has happened on both kinds, not in between.
        if (scenario.draDrivers.length) await slicesPublished(before);
      } else if ('unplug' in step) {
        unlinkSync(join(work, step.unplug));
      } else if ('plug' in step) {
        writeFileSync(join(work, step.plug), '');
      } else if ('stopPlugin' in step) {
        await runtime!.resources.get(step.stopPlugin)!.stop();
      } else {
        const raw = await observe({
          cluster,
          node,
          namespace: ns.name,
          podResources: pr,
          resources: [...resources, ...scenario.draDrivers.map((d) => d.driver)],
          drivers: scenario.draDrivers.map((d) => d.driver),
        });
        for (const [name, c] of Object.entries(raw['claims'] as Record<string, { owners: string[] }>))
          if (c.owners.length > 0) generated.add(name);
        observations[step.observe] = { ...raw, waits: { ...waits } };
      }
    }
    ctx.generated = [...generated];
    return {
      observations: normalise({ ...observations, errors }, ctx) as Record<string, unknown>,
      ms: Date.now() - started,
    };
  } finally {
    for (const p of podResources) p.close();
    await runtime?.stop().catch(() => undefined);
    for (const d of drivers.values()) await d.stop().catch(() => undefined);
    for (const o of clusterScoped)
      await cluster.kubectl(['delete', o, '--ignore-not-found', '--wait=false']).catch(() => undefined);
    await removeDraObjects(cluster, node?.name);
    await ns?.remove().catch(() => undefined);
    await node?.remove().catch(() => undefined);
  }
}
