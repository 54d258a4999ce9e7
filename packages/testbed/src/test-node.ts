// What a test gets when it asks for "a node", simulated (kubelet-sim) or real (a kubelet on the
// local cluster): the paths and credentials Plugboard's plugins, DRA drivers and gateway talk to,
// the same on both, so that one set-up (gatewayDocument, gatewayProcess) serves either.
import type { KubectlResult } from '@plugboard/local-cluster';

export type TestNodeKind = 'sim' | 'real';

export interface TestNode {
  kind: TestNodeKind;
  name: string;
  /** A directory of this node's own where a test may put files (configs, state, tokens). */
  dir: string;
  /** The kubelet's device-plugin directory (`kubelet.sock`), as seen from the test's process. */
  devicePluginDir: string;
  /** Where DRA drivers serve `<driver>/dra.sock`. */
  pluginsDir: string;
  /** The kubelet's plugin watcher directory (DRA drivers' `<driver>-reg.sock`). */
  pluginsRegistryDir: string;
  /** Where DRA drivers write their per-claim CDI specs. */
  cdiDir: string;
  podResourcesSocket: string;
  /**
   * A kubeconfig for the node's API server: kubelet-sim's (which serves every client alike), or on
   * the real cluster the node's own (system:node:<name>; a gateway that needs more, such as
   * `nodes/proxy` for configz, is given the cluster admin's through gatewayDocument's `kubeconfig`).
   */
  kubeconfig: string;
  /** The stand-in for /sys the node's NUMA layout is read from (kubelet-sim's fixture, or /sys). */
  sysfsRoot: string;
  /** Stops the node's kubelet (and what else the test bed started for it). */
  remove(): Promise<void>;
}

/** What a test's own kubectl printed (@plugboard/local-cluster's runKubectl). */
export type { KubectlResult };

/** What the fake runtime recorded of one CreateContainer request (CRI v1, JSON field names). */
export interface CreateContainerRecord {
  containerId?: string;
  request: {
    podSandboxId: string;
    config: {
      metadata: { name: string; attempt?: number };
      /** Decoded (the record holds CRI's bytes in base64). */
      envs?: { key: string; value: string }[];
      devices?: { containerPath: string; hostPath: string; permissions: string }[];
      mounts?: { containerPath: string; hostPath: string; readonly?: boolean }[];
      annotations?: Record<string, string>;
      CDIDevices?: { name: string }[];
      cdiDevices?: { name: string }[];
      labels?: Record<string, string>;
    };
    sandboxConfig: { metadata: { name: string; namespace: string; uid: string } };
  };
}

/** A node of a TestCluster: a TestNode with the kubelet's own operations and its runtime's record. */
export interface ClusterNode extends TestNode {
  /**
   * Every container the kubelet asked its runtime to create, oldest first: on a real node the fake
   * CRI's record of CreateContainer; on kubelet-sim what its device manager and DRA manager handed
   * each started container (the Allocate responses and CDI devices a real kubelet puts in that
   * request; docs/KUBELET-SIM-FIDELITY.md).
   */
  containers(): CreateContainerRecord[];
  /** Stops the kubelet and starts it again, as a kubelet restart; resolves when the Node is Ready. */
  restartKubelet(): Promise<void>;
  /** Stops the kubelet (plugins and the runtime stay), as a kubelet going down. */
  stopKubelet(): Promise<void>;
  /** Starts the stopped kubelet again; resolves when the Node is Ready. */
  startKubelet(): Promise<void>;
  /** Stops the node's processes and deletes its Node object. */
  remove(): Promise<void>;
}

export interface TestNamespace {
  name: string;
  remove(): Promise<void>;
}

/**
 * Where a suite that checks node behaviour gets its nodes and its kubectl, the same on both kinds:
 * `realCluster()` (one control plane, nodes that are real kubelets) or `simCluster(root)` (each node
 * a kubelet-sim with its own API server, control plane and kubelet).
 */
export interface TestCluster {
  kind: TestNodeKind;
  /** A new node named `<prefix>-<random>`, registered and Ready. */
  addNode(prefix: string): Promise<ClusterNode>;
  /** A namespace named `<prefix>-<random>`, usable on every node of this cluster. */
  namespace(prefix: string): Promise<TestNamespace>;
  /**
   * The real kubectl (v1.37) with the rights of the cluster's admin. On kubelet-sim each node has its
   * own API server: `node` names whose (default: the only node added; more than one needs `node`).
   */
  kubectl(args: readonly string[], opts?: { input?: string; node?: TestNode }): Promise<KubectlResult>;
  /** `kubectl … -o json`, parsed. */
  kubectlJson<T = unknown>(args: readonly string[], opts?: { node?: TestNode }): Promise<T>;
  /** A kubeconfig with the admin's rights on the API server `node` is on (what `kubectl` uses). */
  adminKubeconfig(node: TestNode): string;
  /** Removes whatever nodes the test bed still runs for this cluster (sim); nothing on the real one. */
  close(): Promise<void>;
}
