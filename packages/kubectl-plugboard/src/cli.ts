// kubectl-plugboard: parses the command line once, connects to the gateways (directly or through
// the API server's pod proxy), runs one command and turns every failure into a documented exit code.
import { readFileSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import {
  faultClearCommand,
  faultInjectCommand,
  faultListCommand,
  scenarioListCommand,
  scenarioRunCommand,
  scenarioStopCommand,
} from './commands/faults.js';
import { claimsCommand } from './commands/claims.js';
import { migrationCommand } from './commands/migration.js';
import { devicesCommand, nodesCommand, podsCommand } from './commands/read.js';
import { watchCommand } from './commands/watch.js';
import type { CliIo, CommandContext } from './context.js';
import { connect, DEFAULT_SELECTOR, type TargetOptions } from './discovery.js';
import { DEVICE_APIS, type DeviceApi } from './dra.js';
import { CliError, EXIT_CODES } from './errors.js';
import { OUTPUT_FORMATS, parseDurationSeconds, type OutputFormat } from './output.js';
import type { GatewayConnection } from './transport.js';

export const VERSION = '0.1.0';

export const USAGE = `kubectl plugboard — Plugboard's device plugins and DRA drivers from the command line

Usage:
  kubectl plugboard nodes [--node N]                      per node and resource: capacity, allocatable, allocated, unhealthy
  kubectl plugboard devices [--node N] [--resource R] [--api device-plugin|dra] [--unhealthy]
                                                          every device of both APIs: health, what the kubelet was told,
                                                          NUMA node, simulated fault, DRA taints, holder (claim, pod)
  kubectl plugboard claims [--node N] [-n NS | -A]        DRA ResourceClaims: phase, requests, devices, pods, health,
                                                          why a pending one waits (all namespaces unless -n)
  kubectl plugboard pods [--node N]                       pod → devices with their NUMA nodes, NUMA alignment, claims
  kubectl plugboard migration [--node N] [--resource R]   per extended resource and node: device plugin or DRA (its
                                                          DeviceClass, drivers), the pods each way with their special
                                                          claims, what is left to move
  kubectl plugboard fault list [--node N] [--resource R]  active simulated faults (with a DRA fault's taint)
  kubectl plugboard fault inject [--node N] --resource R --device D [--reason TEXT] [--ttl 10m]
                                 [--taint NoSchedule|NoExecute]
                                                          R: an extended resource or a DRA driver; D: the device ID (a
                                                          DRA device's source ID or ResourceSlice name); --taint: DRA
                                                          drivers only, also taint the device in its ResourceSlice
  kubectl plugboard fault clear ID... [--node N] | --all [--node N]
  kubectl plugboard scenario run FILE [--node N]          start a scenario (examples/scenarios/*.yaml) on the nodes it names
  kubectl plugboard scenario list [--node N]
  kubectl plugboard scenario stop ID... [--node N] | --all [--node N]
  kubectl plugboard watch [--node N] [--timeout 1m]       live tables from the gateways' streams, DRA changes as lines
                                                          (Ctrl-C stops)

Reaching the gateways:
  (default)              through the Kubernetes API server's pod proxy, with your kubeconfig: the Running
                         pods matching --selector in every namespace (or --gateway-namespace, -n), port "http"
  --kubeconfig FILE      kubeconfig (default: $KUBECONFIG, ~/.kube/config, in-cluster)
  --context NAME         kubeconfig context
  -n, --namespace NS     namespace of the gateway pods (default: all namespaces); for claims, the claims'
                         namespace instead (-A, --all-namespaces: every namespace, the default)
  --gateway-namespace NS
                         namespace of the gateway pods, for every command (claims included)
  -l, --selector SEL     label selector of the gateway pods (default: ${DEFAULT_SELECTOR})
  --port N               gateway port (default: the pod's container port named "http", else 9400)
  --gateway URL          talk to this gateway directly instead (repeatable or comma-separated; the demo
                         prints its gateway URLs; also $PLUGBOARD_GATEWAYS)

Credentials for mutations (fault inject/clear, scenario run/stop):
  Through the pod proxy the API server consumes your Authorization header, so the CLI sends your bearer
  token in X-Plugboard-Authorization; the gateway verifies it with TokenReview + SubjectAccessReview.
  --token TOKEN          bearer token to send instead of the kubeconfig user's (also $PLUGBOARD_TOKEN),
                         e.g. a short-lived one: --token "$(kubectl create token fault-operator -n plugboard)"
  --token-file FILE      read the token from a file
  Direct (--gateway) mode sends the token as Authorization: Bearer.

Output and other options:
  -o, --output FORMAT    table (default), json or yaml
  --request-timeout D    per-request timeout (default 10s)
  -h, --help             this help;  --version  the version

Exit codes:
  0  success
  1  error
  2  usage: bad flags or arguments, unreadable file or kubeconfig
  3  not found: node, resource, fault, scenario, or no gateway pods
  4  unauthenticated or forbidden: 401/403 from the API server or the gateway (also: faults disabled)
  5  rejected by the gateway: invalid request (unknown device, bad TTL), too many faults
  6  unavailable: gateway or API server unreachable, or answering 502/503/504
  When some gateways answer and others fail, the answers are printed and the first failure decides the code.
`;

const options = {
  output: { type: 'string', short: 'o' },
  gateway: { type: 'string', multiple: true },
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  namespace: { type: 'string', short: 'n' },
  'all-namespaces': { type: 'boolean', short: 'A' },
  'gateway-namespace': { type: 'string' },
  selector: { type: 'string', short: 'l' },
  port: { type: 'string' },
  token: { type: 'string' },
  'token-file': { type: 'string' },
  'request-timeout': { type: 'string' },
  node: { type: 'string' },
  resource: { type: 'string' },
  unhealthy: { type: 'boolean' },
  api: { type: 'string' },
  device: { type: 'string' },
  taint: { type: 'string' },
  reason: { type: 'string' },
  ttl: { type: 'string' },
  all: { type: 'boolean' },
  timeout: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} satisfies ParseArgsConfig['options'];

type OptionName = keyof typeof options;
type Values = ReturnType<typeof parseArgs<{ options: typeof options; allowPositionals: true }>>['values'];

const GLOBAL: OptionName[] = [
  'output',
  'gateway',
  'kubeconfig',
  'context',
  'namespace',
  'gateway-namespace',
  'selector',
  'port',
  'token',
  'token-file',
  'request-timeout',
  'help',
  'version',
];

/** Options each command accepts beyond the global ones. */
const COMMAND_OPTIONS: Record<string, OptionName[]> = {
  nodes: ['node'],
  devices: ['node', 'resource', 'unhealthy', 'api'],
  claims: ['node', 'all-namespaces'],
  pods: ['node'],
  migration: ['node', 'resource'],
  'fault list': ['node', 'resource'],
  'fault inject': ['node', 'resource', 'device', 'reason', 'ttl', 'taint'],
  'fault clear': ['node', 'all'],
  'scenario run': ['node'],
  'scenario list': ['node'],
  'scenario stop': ['node', 'all'],
  watch: ['node', 'timeout'],
};

interface Parsed {
  command: string;
  args: string[];
  values: Values;
}

function parse(argv: string[]): Parsed | 'help' | 'version' {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new CliError('usage', (err as Error).message.split('\n')[0]!, { cause: err });
  }
  const { values, positionals } = parsed;
  if (values.version) return 'version';
  if (values.help || positionals.length === 0 || positionals[0] === 'help') return 'help';
  const [first = '', second, ...rest] = positionals;
  const group = first === 'faults' ? 'fault' : first;
  let command = group;
  let args = positionals.slice(1);
  if (group === 'fault' || group === 'scenario') {
    if (!second)
      throw new CliError(
        'usage',
        `${group}: give a subcommand (${Object.keys(COMMAND_OPTIONS)
          .filter((c) => c.startsWith(group))
          .map((c) => c.split(' ')[1])
          .join(', ')})`,
      );
    command = `${group} ${second}`;
    args = rest;
  }
  if (first === 'faults' && second === undefined) command = 'fault list';
  const allowed = COMMAND_OPTIONS[command];
  if (!allowed)
    throw new CliError('usage', `unknown command "${positionals.slice(0, 2).join(' ')}"; see --help`);
  for (const name of Object.keys(values) as OptionName[]) {
    if (!GLOBAL.includes(name) && !allowed.includes(name))
      throw new CliError('usage', `${command}: --${name} does not apply`);
  }
  return { command, args, values };
}

function duration(values: Values, name: 'ttl' | 'timeout' | 'request-timeout'): number | null {
  const raw = values[name];
  if (raw === undefined) return null;
  const seconds = parseDurationSeconds(raw);
  if (seconds === null) throw new CliError('usage', `--${name} ${raw}: not a duration (e.g. 30s, 10m, 1h)`);
  return seconds;
}

function required(values: Values, name: 'resource' | 'device', command: string): string {
  const v = values[name];
  if (!v) throw new CliError('usage', `${command}: --${name} is required`);
  return v;
}

/** `--api`: device-plugin or DRA, in any case. */
function deviceApi(values: Values): DeviceApi | null {
  const raw = values.api;
  if (raw === undefined) return null;
  const api = DEVICE_APIS.find((a) => a.toLowerCase() === raw.toLowerCase());
  if (!api) throw new CliError('usage', `--api ${raw}: use device-plugin or dra`);
  return api;
}

const TAINT_EFFECTS = ['NoSchedule', 'NoExecute'] as const;

function taintEffect(values: Values): (typeof TAINT_EFFECTS)[number] | null {
  const raw = values.taint;
  if (raw === undefined) return null;
  const effect = TAINT_EFFECTS.find((e) => e === raw);
  if (!effect) throw new CliError('usage', `--taint ${raw}: use ${TAINT_EFFECTS.join(' or ')}`);
  return effect;
}

/**
 * The namespace of the gateway pods: --gateway-namespace, else -n — except for `claims`, where -n
 * (as in kubectl) names the namespace of the objects listed.
 */
function gatewayNamespace(p: Parsed): string | null {
  const v = p.values;
  if (p.command === 'claims') {
    if (v.namespace !== undefined && v['all-namespaces'])
      throw new CliError('usage', 'claims: give -n NAMESPACE or -A, not both');
    return v['gateway-namespace'] ?? null;
  }
  if (
    v.namespace !== undefined &&
    v['gateway-namespace'] !== undefined &&
    v.namespace !== v['gateway-namespace']
  )
    throw new CliError('usage', `${p.command}: -n and --gateway-namespace name different namespaces`);
  return v['gateway-namespace'] ?? v.namespace ?? null;
}

function targetOptions(p: Parsed, env: NodeJS.ProcessEnv): TargetOptions {
  const values = p.values;
  const gateways = (values.gateway ?? (env.PLUGBOARD_GATEWAYS ? [env.PLUGBOARD_GATEWAYS] : []))
    .flatMap((g) => g.split(','))
    .map((g) => g.trim())
    .filter(Boolean);
  let port: number | null = null;
  if (values.port !== undefined) {
    port = Number(values.port);
    if (!Number.isInteger(port) || port < 1 || port > 65535)
      throw new CliError('usage', `--port ${values.port}: not a port`);
  }
  let token = values.token ?? null;
  if (values['token-file']) {
    try {
      token = readFileSync(values['token-file'], 'utf8').trim();
    } catch (err) {
      throw new CliError(
        'usage',
        `cannot read --token-file ${values['token-file']}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
        { cause: err },
      );
    }
  }
  token ??= env.PLUGBOARD_TOKEN?.trim() || null;
  if (token !== null && !/^[\x21-\x7e]+$/.test(token))
    throw new CliError('usage', 'the token must be printable ASCII without spaces');
  return {
    gateways,
    kubeconfig: values.kubeconfig ?? null,
    context: values.context ?? null,
    namespace: gatewayNamespace(p),
    selector: values.selector ?? DEFAULT_SELECTOR,
    port,
    token,
    timeoutMs: (duration(values, 'request-timeout') ?? 10) * 1000,
  };
}

async function dispatch(ctx: CommandContext, p: Parsed): Promise<void> {
  const v = p.values;
  const node = v.node ?? null;
  const noArgs = () => {
    if (p.args.length) throw new CliError('usage', `${p.command}: unexpected argument "${p.args[0]}"`);
  };
  const idsOrAll = () => {
    if (v.all && p.args.length) throw new CliError('usage', `${p.command}: give IDs or --all, not both`);
    if (!v.all && !p.args.length) throw new CliError('usage', `${p.command}: give at least one ID, or --all`);
    return { node, ids: p.args, all: v.all === true };
  };
  switch (p.command) {
    case 'nodes':
      noArgs();
      return nodesCommand(ctx, { node });
    case 'devices':
      noArgs();
      return devicesCommand(ctx, {
        node,
        resource: v.resource ?? null,
        unhealthy: v.unhealthy === true,
        api: deviceApi(v),
      });
    case 'claims':
      noArgs();
      return claimsCommand(ctx, { node, namespace: v.namespace ?? null });
    case 'pods':
      noArgs();
      return podsCommand(ctx, { node });
    case 'migration':
      noArgs();
      return migrationCommand(ctx, { node, resource: v.resource ?? null });
    case 'fault list':
      noArgs();
      return faultListCommand(ctx, { node, resource: v.resource ?? null });
    case 'fault inject':
      noArgs();
      return faultInjectCommand(ctx, {
        node,
        resource: required(v, 'resource', p.command),
        device: required(v, 'device', p.command),
        reason: v.reason ?? 'injected with kubectl plugboard',
        ttlSeconds: duration(v, 'ttl'),
        taint: taintEffect(v),
      });
    case 'fault clear':
      return faultClearCommand(ctx, idsOrAll());
    case 'scenario run':
      if (p.args.length !== 1) throw new CliError('usage', 'scenario run: give exactly one FILE');
      return scenarioRunCommand(ctx, { node, file: p.args[0]! });
    case 'scenario list':
      noArgs();
      return scenarioListCommand(ctx, { node });
    case 'scenario stop':
      return scenarioStopCommand(ctx, idsOrAll());
    case 'watch': {
      noArgs();
      const timeout = duration(v, 'timeout');
      return watchCommand(ctx, { node, timeoutMs: timeout === null ? null : timeout * 1000 });
    }
  }
  throw new CliError('usage', `unknown command "${p.command}"`);
}

export interface RunOptions extends Partial<CliIo> {
  env?: NodeJS.ProcessEnv;
}

/** Runs the CLI with the given arguments; resolves with the exit code (never throws). */
export async function run(argv: string[], o: RunOptions = {}): Promise<number> {
  const io: CliIo = {
    stdout: o.stdout ?? ((s) => void process.stdout.write(s)),
    stderr: o.stderr ?? ((s) => void process.stderr.write(s)),
    isTTY: o.isTTY ?? false,
    signal: o.signal,
    now: o.now ?? Date.now,
  };
  const env = o.env ?? {};
  try {
    const parsed = parse(argv);
    if (parsed === 'help') {
      io.stdout(USAGE);
      return EXIT_CODES.ok;
    }
    if (parsed === 'version') {
      io.stdout(`kubectl-plugboard ${VERSION}\n`);
      return EXIT_CODES.ok;
    }
    const output = (parsed.values.output ?? 'table') as OutputFormat;
    if (!OUTPUT_FORMATS.includes(output))
      throw new CliError('usage', `--output ${output}: use ${OUTPUT_FORMATS.join(', ')}`);
    const target = targetOptions(parsed, env);
    let gateways: Promise<GatewayConnection[]> | null = null;
    const ctx: CommandContext = {
      io,
      output,
      gateways: () => (gateways ??= connect(target)),
      partialErrors: [],
    };
    await dispatch(ctx, parsed);
    return ctx.partialErrors[0]?.exitCode ?? EXIT_CODES.ok;
  } catch (err) {
    const e = CliError.from(err);
    io.stderr(`error: ${e.message}\n`);
    if (e.code === 'usage') io.stderr('Run "kubectl plugboard --help" for usage.\n');
    return e.exitCode;
  }
}

/** Entry point of the bin: real streams, SIGINT stops `watch`, the environment is the process's. */
export async function main(argv: string[]): Promise<number> {
  const abort = new AbortController();
  const onSigint = () => abort.abort();
  process.once('SIGINT', onSigint);
  try {
    return await run(argv, { env: process.env, isTTY: process.stdout.isTTY === true, signal: abort.signal });
  } finally {
    process.off('SIGINT', onSigint);
  }
}
