// What a test gets when it asks for "a node", simulated (kubelet-sim) or real (a kubelet on the
// local cluster): the paths and credentials Plugboard's plugins, DRA drivers and gateway talk to,
// the same on both, so that one set-up (gatewayDocument, gatewayProcess) serves either.

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
