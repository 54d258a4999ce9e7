// What the HTTP layer is given: the gateway's state and services (it owns none of them).
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config.js';
import type { NodeModel } from '../model/node-model.js';
import type { FaultStore } from '../faults/fault-store.js';
import type { ScenarioRunner } from '../faults/scenarios.js';
import type { TaintRuleFaults } from '../faults/taint-rules.js';
import type { NodeHistoryStore } from '../model/history.js';
import type { Placement } from '../model/placement.js';
import type { Authorizer } from './auth.js';
import type { GatewayMetrics } from './metrics.js';
import type { StreamHub } from './stream.js';

export interface HttpContext {
  config: GatewayConfig;
  model: NodeModel;
  faults: FaultStore;
  /** Faults on other drivers' DRA devices as DeviceTaintRules (null/absent: not wired, as in some tests). */
  taintRules?: TaintRuleFaults | null;
  scenarios: ScenarioRunner;
  authorizer: Authorizer;
  hub: StreamHub;
  metrics: GatewayMetrics;
  logger: Logger;
  /** "Try to place": the prediction, and admitting through kubelet-sim (null: not wired, as in some tests). */
  placement?: Placement | null;
  /** The bounded history (null when gateway.history.enabled is false). */
  history?: NodeHistoryStore | null;
  readiness(): { ready: boolean; detail: string };
}
