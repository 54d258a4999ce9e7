// The kinds of node a node-behaviour suite runs on. `openTestBed(kind, …)` (test-bed.ts) opens the
// TestCluster of a kind; the real kind needs the real cluster `npm test` starts for
// `*.real.test.ts` files (PLUGBOARD_REAL_CLUSTER_DIR); the sim kind needs only the real kubectl.
import type { TestNodeKind } from './test-node.js';

/** The kinds a node-behaviour suite runs on: kubelet-sim and the real kubelet, in that order. */
export function testClusterKinds(): readonly TestNodeKind[] {
  return ['sim', 'real'];
}
