// @plugboard/kubectl-plugboard: the kubectl plugin as a library (tests and wrappers call `run`).
export { run, main, USAGE, VERSION, type RunOptions } from './cli.js';
export { CliError, EXIT_CODES, type CliErrorCode } from './errors.js';
export { PROXY_AUTH_HEADER } from './transport.js';
export { DEFAULT_SELECTOR, DEFAULT_GATEWAY_PORT } from './discovery.js';
