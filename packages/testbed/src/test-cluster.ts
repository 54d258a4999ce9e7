// One suite body, both kinds of node: `for (const kind of testClusterKinds()) describe(…)` with
// `testCluster(kind, root)` in its `before`. The real kind needs the real cluster `npm test` starts
// for `*.real.test.ts` files (PLUGBOARD_REAL_CLUSTER_DIR); the sim kind needs only the real kubectl.
import { realCluster } from './real-cluster.js';
import { simCluster } from './sim-cluster.js';
import type { TestCluster, TestNodeKind } from './test-node.js';

/** The kinds a node-behaviour suite runs on: kubelet-sim and the real kubelet, in that order. */
export function testClusterKinds(): readonly TestNodeKind[] {
  return ['sim', 'real'];
}

/** The TestCluster of `kind`; sim nodes live under `root`. */
export function testCluster(kind: TestNodeKind, root: string): TestCluster {
  return kind === 'real' ? realCluster() : simCluster(root);
}
