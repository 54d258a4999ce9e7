// The simulated kind of TestCluster: each node a kubelet-sim (simNode) with its own API server,
// control plane and kubelet, in this process; `kubectl` is the same real kubectl v1.37 binary the
// real cluster's suites run (cachedBinaries of @plugboard/local-cluster), pointed at the API server
// of the node a test added. What differs from the real kind is listed, measured, in
// docs/KUBELET-SIM-FIDELITY.md.
import { randomBytes } from 'node:crypto';
import { cachedBinaries, runKubectl } from '@plugboard/local-cluster';
import type { KubeletState } from '@plugboard/kubelet-sim';
import { simNode, type SimNode, type SimNodeOptions } from './sim-node.js';
import type {
  ClusterNode,
  CreateContainerRecord,
  KubectlResult,
  TestCluster,
  TestNamespace,
  TestNode,
} from './test-node.js';

export interface SimClusterNode extends SimNode, ClusterNode {
  kind: 'sim';
}

export interface SimCluster extends TestCluster {
  kind: 'sim';
  addNode(prefix: string, options?: SimNodeOptions): Promise<SimClusterNode>;
}

/** One entry per container that reached its runtime (started at least once), oldest pod first. */
export function simContainers(state: KubeletState): CreateContainerRecord[] {
  const records: CreateContainerRecord[] = [];
  for (const pod of state.pods) {
    for (const c of pod.containers) {
      if (c.state !== 'running' && c.state !== 'terminated' && c.restartCount === 0) continue;
      const responses = Object.values(c.allocateResponses) as {
        envs?: Record<string, string>;
        mounts?: { containerPath: string; hostPath: string; readOnly?: boolean }[];
        devices?: { containerPath: string; hostPath: string; permissions: string }[];
        annotations?: Record<string, string>;
        cdiDevices?: { name: string }[];
      }[];
      // The kubelet merges every resource's Allocate response into the container's run options
      // (pkg/kubelet/cm/devicemanager/manager.go, GetDeviceRunContainerOptions) and adds the DRA
      // manager's CDI devices (pkg/kubelet/cm/dra/manager.go, GetResources) before CreateContainer.
      const envs = responses.flatMap((r) =>
        Object.entries(r.envs ?? {}).map(([key, value]) => ({ key, value })),
      );
      const annotations = Object.assign({}, ...responses.map((r) => r.annotations ?? {})) as Record<
        string,
        string
      >;
      records.push({
        request: {
          podSandboxId: pod.uid,
          config: {
            metadata: { name: c.name, attempt: c.restartCount },
            envs,
            devices: responses.flatMap((r) => r.devices ?? []),
            mounts: responses.flatMap((r) =>
              (r.mounts ?? []).map((m) => ({
                containerPath: m.containerPath,
                hostPath: m.hostPath,
                ...(m.readOnly ? { readonly: true } : {}),
              })),
            ),
            annotations,
            CDIDevices: [
              ...responses.flatMap((r) => r.cdiDevices ?? []).map((d) => ({ name: d.name })),
              ...c.cdiDevices.map((name) => ({ name })),
            ],
          },
          sandboxConfig: { metadata: { name: pod.name, namespace: pod.namespace, uid: pod.uid } },
        },
      });
    }
  }
  return records;
}

/**
 * A TestCluster of kubelet-sims: nodes in `<root>/<name>`. The real kubectl must be built
 * (`npx plugboard-cluster build`; `npm test` does it when a real-cluster suite is selected).
 */
export function simCluster(root: string, env: NodeJS.ProcessEnv = process.env): SimCluster {
  const bins = cachedBinaries(env);
  if (!bins)
    throw new Error(
      'the real kubectl is not built (the local cluster’s binaries): run `npx plugboard-cluster build`',
    );
  const nodes: SimClusterNode[] = [];
  const nodeFor = (node: TestNode | undefined): TestNode => {
    if (node) return node;
    if (nodes.length === 1) return nodes[0]!;
    throw new Error(
      `kubectl on kubelet-sim needs the node whose API server to use (this cluster has ${nodes.length} nodes)`,
    );
  };
  const kubectl = (
    args: readonly string[],
    opts: { input?: string; node?: TestNode } = {},
  ): Promise<KubectlResult> => runKubectl(bins.kubectl, nodeFor(opts.node).kubeconfig, args, opts);
  return {
    kind: 'sim',
    addNode: async (prefix, options = {}) => {
      const sim = await simNode(root, `${prefix}-${randomBytes(3).toString('hex')}`, options);
      const node: SimClusterNode = {
        ...sim,
        containers: () => simContainers(sim.sim.state()),
        restartKubelet: () => sim.sim.restart(),
        stopKubelet: () => sim.sim.stopKubelet(),
        startKubelet: () => sim.sim.startKubelet(),
        remove: async () => {
          nodes.splice(nodes.indexOf(node), 1);
          await sim.remove();
        },
      };
      nodes.push(node);
      return node;
    },
    // kubelet-sim creates a namespace on first use (apiserver/bootstrap.ts), on whichever node's API
    // server; it goes with the node.
    namespace: (prefix): Promise<TestNamespace> =>
      Promise.resolve({
        name: `${prefix}-${randomBytes(3).toString('hex')}`,
        remove: () => Promise.resolve(),
      }),
    kubectl,
    kubectlJson: async <T>(args: readonly string[], opts: { node?: TestNode } = {}) =>
      JSON.parse((await kubectl([...args, '-o', 'json'], opts)).stdout) as T,
    adminKubeconfig: (node) => node.kubeconfig,
    close: async () => {
      for (const n of [...nodes]) await n.remove();
    },
  };
}
