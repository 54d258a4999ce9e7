// @plugboard/demo as a library: the simulated cluster for tests and benchmarks.
export {
  startDemoCluster,
  waitForSnapshot,
  type DemoCluster,
  type DemoNode,
  type SimDemoNode,
  type RealDemoNode,
  type StartClusterOptions,
} from './cluster.js';
export { startRealDemoCluster, type RealDemoCluster } from './real-cluster.js';
export { loadDemo, podFor, demoSchema, type LoadedDemo, type DemoSpec } from './demo-config.js';
export { loadScenario, playScenario, type ScenarioPlayback } from './scenario-player.js';
export { ensureWebBuild, webBuildNeeded } from './web-build.js';
export { DemoError, type DemoErrorCode } from './errors.js';
