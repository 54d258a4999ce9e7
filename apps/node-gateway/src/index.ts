// @plugboard/node-gateway: the per-node gateway as a library (the demo and tests start it in-process).
// The wire contract it serves (snapshot, stream, request schemas) is @plugboard/api's.
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
export { ScenarioRunner } from './faults/scenarios.js';
export { GATEWAY_VERSION } from './version.js';
