// @plugboard/node-gateway: the per-node gateway as a library (the demo and tests start it in-process)
// and the node model types the dashboard renders.
export { startGateway, type Gateway, type GatewayDeps } from './main.js';
export {
  loadGatewayConfig,
  parseGatewayConfig,
  gatewaySectionSchema,
  GATEWAY_USAGE,
  type GatewayConfig,
  type GatewaySection,
  type GatewaySectionInput,
  type KubeMode,
  type LoadResult,
} from './config.js';
export { GatewayError, type GatewayErrorCode } from './errors.js';
export { NodeModel, type ModelChange } from './model/node-model.js';
export { buildSnapshot, type ModelInputs } from './model/build.js';
export { diffDocuments, diffEventRing } from './model/diff.js';
export { summarize } from './model/summary.js';
export {
  scenarioBodySchema,
  scenarioDocumentSchema,
  type ScenarioDocument,
  type ScenarioState,
} from './faults/scenarios.js';
export { CLOSE_SLOW_CONSUMER } from './http/stream.js';
export { GATEWAY_VERSION } from './version.js';
export type * from './model/types.js';
