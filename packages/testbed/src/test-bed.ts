// What every both-kinds suite opens in its `before` and closes in its `after`, written once: a
// temporary directory of its own, the TestCluster of its kind, its nodes and a namespace; then, in
// reverse, whatever the suite started on them (`defer`), the namespace, the nodes, the cluster and
// the directory. A suite reads:
//
//   for (const kind of testClusterKinds())
//     describe(`… on ${kind} nodes`, () => {
//       let bed: TestBed;
//       before(async () => {
//         bed = await openTestBed(kind, 'dp');
//         const runtime = await startPlugins(…, { devicePluginDir: bed.node.devicePluginDir });
//         bed.defer(() => runtime.stop());
//       });
//       after(() => bed?.close());
//       …
//     });
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realCluster } from './real-cluster.js';
import { simCluster } from './sim-cluster.js';
import type { SimNodeOptions } from './sim-node.js';
import type { ClusterNode, TestCluster, TestNamespace, TestNodeKind } from './test-node.js';

export interface TestBedOptions {
  /** The prefixes of the nodes to add, in order (default: one node, prefixed with the bed's name). */
  nodes?: readonly string[];
  /** The namespace's prefix (default: the bed's name). */
  namespace?: string;
  /** kubelet-sim options for every node of the sim kind (e.g. a shorter grace period). */
  sim?: SimNodeOptions['sim'];
}

export interface TestBed {
  kind: TestNodeKind;
  /** The suite's own temporary directory (sim nodes live under it); removed by close(). */
  work: string;
  cluster: TestCluster;
  /** The nodes asked for, Ready, in the order of `nodes`. */
  nodes: ClusterNode[];
  /** The first node (most suites add one). */
  node: ClusterNode;
  ns: TestNamespace;
  /**
   * Something to undo on close(), before the namespace, the nodes and the cluster go: the last
   * deferred runs first, as Go's defer.
   */
  defer(undo: () => unknown): void;
  /**
   * `kubectl apply` of cluster-scoped objects (DeviceClasses: the real cluster is shared by the
   * suites, so their names carry the namespace's); close() deletes them.
   */
  applyClusterScoped(...objects: readonly object[]): Promise<void>;
  /** Undoes everything, each step even when one before it failed; then throws the first failure. */
  close(): Promise<void>;
}

/** Opens a test bed of `kind` for the suite `name` (the prefix of its directory, nodes and namespace). */
export async function openTestBed(
  kind: TestNodeKind,
  name: string,
  options: TestBedOptions = {},
): Promise<TestBed> {
  const work = mkdtempSync(join(tmpdir(), `pb-${kind}-${name}-`));
  const undo: (() => unknown)[] = [() => rmSync(work, { recursive: true, force: true })];
  const close = async (): Promise<void> => {
    const failures: unknown[] = [];
    for (let step = undo.pop(); step; step = undo.pop()) {
      try {
        await step();
      } catch (err) {
        failures.push(err);
      }
    }
    if (failures.length) throw failures[0];
  };
  try {
    let cluster: TestCluster;
    let addNode: (prefix: string) => Promise<ClusterNode>;
    if (kind === 'sim') {
      const sim = simCluster(work);
      cluster = sim;
      addNode = (prefix) => sim.addNode(prefix, options.sim ? { sim: options.sim } : {});
    } else {
      cluster = realCluster();
      addNode = (prefix) => cluster.addNode(prefix);
    }
    undo.push(() => cluster.close());
    const added = await Promise.allSettled((options.nodes ?? [name]).map((prefix) => addNode(prefix)));
    const nodes: ClusterNode[] = [];
    for (const a of added)
      if (a.status === 'fulfilled') {
        nodes.push(a.value);
        undo.push(() => a.value.remove());
      }
    const failed = added.find((a) => a.status === 'rejected');
    if (failed) throw failed.reason;
    const ns = await cluster.namespace(options.namespace ?? name);
    undo.push(() => ns.remove());
    return {
      kind,
      work,
      cluster,
      nodes,
      node: nodes[0]!,
      ns,
      defer: (step) => void undo.push(step),
      applyClusterScoped: async (...objects) => {
        const input = JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects });
        await cluster.kubectl(['apply', '-f', '-'], { input });
        undo.push(() =>
          cluster.kubectl(['delete', '-f', '-', '--ignore-not-found', '--wait=false'], { input }),
        );
      },
      close,
    };
  } catch (err) {
    await close().catch(() => {});
    throw err;
  }
}
