// Gateway configuration: one YAML file (the plugin config of @plugboard/plugin plus a `gateway:` key),
// overridden by PLUGBOARD_* environment variables, overridden by CLI flags. Parsed once with zod into
// a frozen GatewayConfig; nothing else in the gateway reads process.env or argv.
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import {
  DEVICE_PLUGIN_PATH,
  KUBELET_PLUGINS_PATH,
  PLUGINS_REGISTRY_PATH,
  POD_RESOURCES_SOCKET,
} from '@plugboard/proto';
import {
  DEFAULT_CDI_SPEC_DIR,
  parseConfigWith,
  pluginConfigSchema,
  type PluginConfig,
} from '@plugboard/plugin';
import { GatewayError } from './errors.js';
import { checkTiers } from './model/history.js';

const listenSchema = z
  .string()
  .regex(/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, 'must be HOST:PORT (port 0 picks a free port)')
  .refine((s) => Number(s.slice(s.lastIndexOf(':') + 1)) <= 65535, 'port must be 0..65535');

const ms = (min: number, max: number, def: number) => z.number().int().min(min).max(max).default(def);

export const gatewaySectionSchema = z
  .object({
    /** Node this gateway describes; defaults to the host name. */
    nodeName: z.string().min(1).max(253).optional(),
    listen: listenSchema.default('127.0.0.1:9400'),
    devicePluginDir: z.string().min(1).default(DEVICE_PLUGIN_PATH),
    /** DRA drivers (the config's `dra:` list) serve `<pluginsDir>/<driver>/dra.sock`. */
    pluginsDir: z.string().min(1).default(KUBELET_PLUGINS_PATH),
    /** The kubelet's plugin watcher directory: DRA drivers' `<driver>-reg.sock`. */
    pluginsRegistryDir: z.string().min(1).default(PLUGINS_REGISTRY_PATH.replace(/\/$/, '')),
    /** Where DRA drivers write their per-claim CDI specs. */
    cdiDir: z.string().min(1).default(DEFAULT_CDI_SPEC_DIR),
    /** Where active faults are persisted; null keeps them in memory only. */
    stateDir: z.string().min(1).nullable().default(null),
    logLevel: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
    podResources: z
      .object({
        /** null disables the PodResources source. */
        socket: z.string().min(1).nullable().default(POD_RESOURCES_SOCKET),
        pollIntervalMs: ms(50, 60_000, 1000),
        timeoutMs: ms(50, 60_000, 2000),
        maxBackoffMs: ms(100, 600_000, 30_000),
      })
      .strict()
      .prefault({}),
    kube: z
      .object({
        /** auto: in-cluster when KUBERNETES_SERVICE_HOST is set, else disabled. */
        mode: z.enum(['auto', 'in-cluster', 'kubeconfig', 'disabled']).default('auto'),
        kubeconfig: z.string().min(1).nullable().default(null),
        /** Post Kubernetes Events on the Node for health transitions and faults. */
        emitEvents: z.boolean().default(true),
        maxBackoffMs: ms(100, 600_000, 30_000),
      })
      .strict()
      .prefault({}),
    auth: z
      .object({
        /** File holding the static bearer token for mutations. */
        tokenFile: z.string().min(1).nullable().default(null),
        /** TokenReview + SubjectAccessReview against the API server (kubernetes mode). */
        kubernetes: z
          .object({
            enabled: z.boolean().default(false),
            verb: z.string().min(1).default('create'),
            group: z.string().default('plugboard.io'),
            resource: z.string().min(1).default('faults'),
            namespace: z.string().min(1).nullable().default(null),
          })
          .strict()
          .prefault({}),
        insecureAllowUnauthenticated: z.boolean().default(false),
      })
      .strict()
      .prefault({}),
    faults: z
      .object({
        enabled: z.boolean().default(false),
        maxActive: z.number().int().min(1).max(100_000).default(4096),
        /** Upper bound for a fault's ttlSeconds; null = unbounded (faults may last until cleared). */
        maxTtlSeconds: z.number().int().min(1).nullable().default(null),
      })
      .strict()
      .prefault({}),
    stream: z
      .object({
        /** Origins allowed to open the WebSocket; empty = same-origin and Origin-less clients only. "*" allows any. */
        allowedOrigins: z.array(z.string().min(1)).default([]),
        heartbeatMs: ms(100, 300_000, 15_000),
        /** Bytes a client may have waiting to be sent before it is cut off as too slow. */
        maxQueueBytes: z
          .number()
          .int()
          .min(1024)
          .max(1 << 30)
          .default(8 << 20),
        /** Patches kept for `?since=N` resume. */
        historySize: z.number().int().min(1).max(100_000).default(1024),
        maxClients: z.number().int().min(1).max(100_000).default(5000),
      })
      .strict()
      .prefault({}),
    events: z
      .object({ ringSize: z.number().int().min(1).max(100_000).default(200) })
      .strict()
      .prefault({}),
    history: z
      .object({
        enabled: z.boolean().default(true),
        /**
         * Downsampling tiers, finest first: buckets of resolutionMs kept for retentionMs. Memory is
         * bounded by these alone (docs/GATEWAY.md "History"). The finest tier also paces the stream's
         * `history` messages.
         */
        tiers: z
          .array(
            z
              .object({
                resolutionMs: ms(100, 86_400_000, 10_000),
                retentionMs: ms(100, 30 * 86_400_000, 3_600_000),
              })
              .strict()
              .refine((t) => t.retentionMs / t.resolutionMs <= 100_000, {
                message: 'at most 100000 buckets per tier (retentionMs / resolutionMs)',
              }),
          )
          .min(1)
          .max(6)
          .superRefine((tiers, ctx) => {
            const problem = checkTiers(tiers);
            if (problem) ctx.addIssue({ code: 'custom', message: problem });
          })
          .default([
            { resolutionMs: 10_000, retentionMs: 3_600_000 },
            { resolutionMs: 60_000, retentionMs: 6 * 3_600_000 },
            { resolutionMs: 300_000, retentionMs: 24 * 3_600_000 },
          ]),
        /** Health transitions kept per device (oldest dropped first). */
        maxTransitionsPerDevice: z.number().int().min(1).max(10_000).default(256),
      })
      .strict()
      .prefault({}),
    topology: z
      .object({
        /**
         * Root of the sysfs tree the NUMA layout (CPUs and memory per NUMA node, SMT siblings) is
         * read from at start; kubelet-sim writes one under its state dir.
         */
        sysfsRoot: z.string().min(1).default('/sys'),
        /** Polling interval of the kubelet-sim control API (Topology Manager decisions), when present. */
        pollIntervalMs: ms(50, 60_000, 1000),
        /**
         * The kubelet's settings (Topology/CPU/Memory Manager policies, scope, reserved CPUs) from its
         * configz through the API server's node proxy: needs RBAC `get` on `nodes/proxy`.
         */
        configz: z
          .object({
            enabled: z.boolean().default(true),
            /** How often to read it again (the kubelet's settings change only when it restarts). */
            intervalMs: ms(1000, 3_600_000, 60_000),
          })
          .strict()
          .prefault({}),
      })
      .strict()
      .prefault({}),
    http: z
      .object({
        maxBodyBytes: z
          .number()
          .int()
          .min(256)
          .max(16 << 20)
          .default(64 << 10),
        /**
         * Mutations (fault and scenario POST/DELETE) per client address: a token bucket refilled at
         * `perSecond` holding at most `burst`. Beyond it: 429 with Retry-After. null disables it.
         */
        mutationRateLimit: z
          .object({
            perSecond: z.number().positive().max(100_000).default(20),
            burst: z.number().int().min(1).max(100_000).default(200),
          })
          .strict()
          .nullable()
          .prefault({}),
      })
      .strict()
      .prefault({}),
  })
  .strict();

export type GatewaySectionInput = z.input<typeof gatewaySectionSchema>;
export type GatewaySection = z.output<typeof gatewaySectionSchema>;

const documentSchema = pluginConfigSchema.safeExtend({ gateway: gatewaySectionSchema.prefault({}) });

export type KubeMode = 'in-cluster' | 'kubeconfig' | 'disabled';

export interface GatewayConfig {
  /** Where the config came from (file path or "<inline>"), for messages. */
  readonly source: string;
  readonly plugins: PluginConfig;
  readonly nodeName: string;
  readonly listen: { readonly host: string; readonly port: number };
  readonly devicePluginDir: string;
  readonly pluginsDir: string;
  readonly pluginsRegistryDir: string;
  readonly cdiDir: string;
  readonly stateDir: string | null;
  readonly logLevel: GatewaySection['logLevel'];
  readonly podResources: GatewaySection['podResources'];
  readonly kube: Omit<GatewaySection['kube'], 'mode'> & { readonly mode: KubeMode };
  readonly auth: GatewaySection['auth'];
  readonly faults: GatewaySection['faults'];
  readonly stream: GatewaySection['stream'];
  readonly events: GatewaySection['events'];
  readonly topology: GatewaySection['topology'];
  readonly history: GatewaySection['history'];
  readonly http: GatewaySection['http'];
}

function splitListen(listen: string): { host: string; port: number } {
  const i = listen.lastIndexOf(':');
  const host = listen.slice(0, i).replace(/^\[(.*)\]$/, '$1');
  return { host, port: Number(listen.slice(i + 1)) };
}

/**
 * Validates a config document (the YAML's shape: plugin `resources` plus `gateway`) and resolves
 * defaults. `env` only decides `kube.mode: auto` and the default node name.
 */
export function parseGatewayConfig(
  document: unknown,
  options: { source?: string; env?: Record<string, string | undefined> } = {},
): GatewayConfig {
  const source = options.source ?? '<inline>';
  const env = options.env ?? {};
  let parsed: z.output<typeof documentSchema>;
  try {
    // The plugin package's parser names file, field and reason the same way for both sections.
    // No resource and no DRA driver is fine here: the gateway then observes (docs/GATEWAY.md).
    parsed = parseConfigWith(documentSchema, document ?? {}, source, { allowNothingToServe: true });
  } catch (err) {
    throw new GatewayError('config-invalid', `invalid gateway config:\n${(err as Error).message}`, {
      cause: err,
    });
  }
  const { gateway, ...plugins } = parsed;
  let mode: KubeMode;
  if (gateway.kube.mode === 'auto') {
    mode = gateway.kube.kubeconfig ? 'kubeconfig' : env.KUBERNETES_SERVICE_HOST ? 'in-cluster' : 'disabled';
  } else {
    mode = gateway.kube.mode;
  }
  if (mode === 'kubeconfig' && !gateway.kube.kubeconfig) {
    throw new GatewayError(
      'config-invalid',
      `invalid gateway config: ${source}: gateway.kube.kubeconfig: required when kube.mode is kubeconfig`,
    );
  }
  if (plugins.dra.length > 0 && mode === 'disabled') {
    throw new GatewayError(
      'config-invalid',
      `invalid gateway config: ${source}: dra: DRA drivers need the Kubernetes API (kube.mode is disabled): set gateway.kube.kubeconfig or run in a cluster`,
    );
  }
  if (gateway.auth.kubernetes.enabled && mode === 'disabled') {
    throw new GatewayError(
      'config-invalid',
      `invalid gateway config: ${source}: gateway.auth.kubernetes.enabled: needs the Kubernetes API (kube.mode is disabled)`,
    );
  }
  // parseConfigWith froze every parsed section; freeze the shells built here.
  return Object.freeze({
    source,
    plugins: Object.freeze(plugins),
    nodeName: gateway.nodeName ?? env.PLUGBOARD_NODE_NAME ?? hostname(),
    listen: Object.freeze(splitListen(gateway.listen)),
    devicePluginDir: gateway.devicePluginDir,
    pluginsDir: gateway.pluginsDir,
    pluginsRegistryDir: gateway.pluginsRegistryDir,
    cdiDir: gateway.cdiDir,
    stateDir: gateway.stateDir,
    logLevel: gateway.logLevel,
    podResources: gateway.podResources,
    kube: Object.freeze({ ...gateway.kube, mode }),
    auth: gateway.auth,
    faults: gateway.faults,
    stream: gateway.stream,
    events: gateway.events,
    topology: gateway.topology,
    history: gateway.history,
    http: gateway.http,
  });
}

export const GATEWAY_USAGE = `Usage: plugboard-gateway [--config FILE] [options]

Runs the node's device plugins and serves the node model (REST, WebSocket, Prometheus metrics).
With no resource and no DRA driver (no --config, or \`resources: []\`) it runs as an observer: it
serves the model from the kubelet's and the API server's view only (other device plugins included).

Options (each has a PLUGBOARD_* environment equivalent; flags win over env, env over the file):
  --config FILE                  plugin + gateway YAML config (optional) PLUGBOARD_CONFIG
  --device-plugin-dir DIR        kubelet device-plugin directory         PLUGBOARD_DEVICE_PLUGIN_DIR
                                 (default ${DEVICE_PLUGIN_PATH})
  --plugins-dir DIR              DRA drivers serve DIR/<driver>/dra.sock PLUGBOARD_PLUGINS_DIR
                                 (default ${KUBELET_PLUGINS_PATH})
  --plugins-registry-dir DIR     plugin watcher directory (DRA <driver>-reg.sock)
                                 (default ${PLUGINS_REGISTRY_PATH.replace(/\/$/, '')}) PLUGBOARD_PLUGINS_REGISTRY_DIR
  --cdi-dir DIR                  DRA drivers' CDI spec directory         PLUGBOARD_CDI_DIR
                                 (default ${DEFAULT_CDI_SPEC_DIR})
  --pod-resources-socket PATH    kubelet PodResources socket, "" disables PLUGBOARD_POD_RESOURCES_SOCKET
                                 (default ${POD_RESOURCES_SOCKET})
  --listen HOST:PORT             HTTP/WebSocket address (default 127.0.0.1:9400) PLUGBOARD_LISTEN
  --node-name NAME               node this gateway describes (default: host name) PLUGBOARD_NODE_NAME
  --kubeconfig FILE              use the Kubernetes API through a kubeconfig PLUGBOARD_KUBECONFIG
  --in-cluster                   use the in-cluster service account      PLUGBOARD_KUBE_MODE=in-cluster
  --no-kube                      do not use the Kubernetes API           PLUGBOARD_KUBE_MODE=disabled
  --auth-token-file FILE         static bearer token for mutations       PLUGBOARD_AUTH_TOKEN_FILE
  --kube-auth                    authorize mutations with TokenReview + SubjectAccessReview
                                                                         PLUGBOARD_KUBE_AUTH=true
  --state-dir DIR                persist active faults here              PLUGBOARD_STATE_DIR
  --enable-faults                enable the fault and scenario endpoints PLUGBOARD_ENABLE_FAULTS=true
  --allowed-origin ORIGIN        WebSocket Origin allow-list (repeatable) PLUGBOARD_ALLOWED_ORIGINS (comma-separated)
  --insecure-allow-unauthenticated
                                 allow mutations without a token on a non-loopback address
                                                                         PLUGBOARD_INSECURE_ALLOW_UNAUTHENTICATED=true
  --log-level LEVEL              trace|debug|info|warn|error|fatal|silent PLUGBOARD_LOG_LEVEL
  -h, --help                     show this help

Config keys under \`gateway:\` are documented in docs/GATEWAY.md.`;

export type LoadResult = { help: true } | { help: false; config: GatewayConfig };

const truthy = (v: string | undefined): boolean | undefined =>
  v === undefined || v === '' ? undefined : /^(1|true|yes|on)$/i.test(v);

/** Reads flags + env + the YAML file into a GatewayConfig (or `{ help: true }`). */
export function loadGatewayConfig(
  argv: readonly string[],
  env: Record<string, string | undefined>,
): LoadResult {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        config: { type: 'string' },
        'device-plugin-dir': { type: 'string' },
        'plugins-dir': { type: 'string' },
        'plugins-registry-dir': { type: 'string' },
        'cdi-dir': { type: 'string' },
        'pod-resources-socket': { type: 'string' },
        listen: { type: 'string' },
        'node-name': { type: 'string' },
        kubeconfig: { type: 'string' },
        'in-cluster': { type: 'boolean' },
        'no-kube': { type: 'boolean' },
        'auth-token-file': { type: 'string' },
        'kube-auth': { type: 'boolean' },
        'state-dir': { type: 'string' },
        'enable-faults': { type: 'boolean' },
        'allowed-origin': { type: 'string', multiple: true },
        'insecure-allow-unauthenticated': { type: 'boolean' },
        'log-level': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    throw new GatewayError('config-invalid', `invalid command line: ${(err as Error).message}`, {
      cause: err,
    });
  }
  if (values.help) return { help: true };
  const kubeFlags = [values.kubeconfig !== undefined, values['in-cluster'], values['no-kube']].filter(
    Boolean,
  ).length;
  if (kubeFlags > 1) {
    throw new GatewayError(
      'config-invalid',
      'invalid command line: --kubeconfig, --in-cluster and --no-kube are mutually exclusive',
    );
  }

  // No config file: an observer with every default (flags and env still apply).
  const file = values.config ?? env.PLUGBOARD_CONFIG;
  const source = file ?? '<no --config: observer>';
  let document: Record<string, unknown> = {};
  if (file) {
    try {
      const raw: unknown = parseYaml(readFileSync(file, 'utf8'));
      if (raw !== null && raw !== undefined && (typeof raw !== 'object' || Array.isArray(raw))) {
        throw new Error('the top level must be a mapping');
      }
      document = (raw ?? {}) as Record<string, unknown>;
    } catch (err) {
      throw new GatewayError('config-invalid', `cannot read config ${file}: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }
  const fileGateway = document.gateway;
  if (
    fileGateway !== undefined &&
    (fileGateway === null || typeof fileGateway !== 'object' || Array.isArray(fileGateway))
  ) {
    throw new GatewayError('config-invalid', `invalid gateway config: ${source}: gateway: must be a mapping`);
  }
  type Section = Record<string, unknown>;
  const gw: Section = structuredClone((fileGateway ?? {}) as Section);
  const section = (key: string): Section => (gw[key] ??= {}) as Section;

  // env first, then flags, so flags win.
  const pick = (flag: string | undefined, envName: string): string | undefined => flag ?? env[envName];
  const devicePluginDir = pick(values['device-plugin-dir'], 'PLUGBOARD_DEVICE_PLUGIN_DIR');
  if (devicePluginDir !== undefined) gw.devicePluginDir = devicePluginDir;
  const pluginsDir = pick(values['plugins-dir'], 'PLUGBOARD_PLUGINS_DIR');
  if (pluginsDir !== undefined) gw.pluginsDir = pluginsDir;
  const pluginsRegistryDir = pick(values['plugins-registry-dir'], 'PLUGBOARD_PLUGINS_REGISTRY_DIR');
  if (pluginsRegistryDir !== undefined) gw.pluginsRegistryDir = pluginsRegistryDir;
  const cdiDir = pick(values['cdi-dir'], 'PLUGBOARD_CDI_DIR');
  if (cdiDir !== undefined) gw.cdiDir = cdiDir;
  const prSocket = pick(values['pod-resources-socket'], 'PLUGBOARD_POD_RESOURCES_SOCKET');
  if (prSocket !== undefined) section('podResources').socket = prSocket === '' ? null : prSocket;
  const listen = pick(values.listen, 'PLUGBOARD_LISTEN');
  if (listen !== undefined) gw.listen = listen;
  const nodeName = pick(values['node-name'], 'PLUGBOARD_NODE_NAME');
  if (nodeName !== undefined) gw.nodeName = nodeName;
  const stateDir = pick(values['state-dir'], 'PLUGBOARD_STATE_DIR');
  if (stateDir !== undefined) gw.stateDir = stateDir === '' ? null : stateDir;
  const tokenFile = pick(values['auth-token-file'], 'PLUGBOARD_AUTH_TOKEN_FILE');
  if (tokenFile !== undefined) section('auth').tokenFile = tokenFile === '' ? null : tokenFile;
  const logLevel = pick(values['log-level'], 'PLUGBOARD_LOG_LEVEL');
  if (logLevel !== undefined) gw.logLevel = logLevel;

  const envKubeconfig = env.PLUGBOARD_KUBECONFIG;
  const envMode = env.PLUGBOARD_KUBE_MODE;
  if (kubeFlags === 1) {
    if (values.kubeconfig !== undefined)
      Object.assign(section('kube'), { mode: 'kubeconfig', kubeconfig: values.kubeconfig });
    else section('kube').mode = values['in-cluster'] ? 'in-cluster' : 'disabled';
  } else {
    if (envKubeconfig)
      Object.assign(section('kube'), { kubeconfig: envKubeconfig, mode: envMode ?? 'kubeconfig' });
    else if (envMode) section('kube').mode = envMode;
  }

  const kubeAuth = values['kube-auth'] ?? truthy(env.PLUGBOARD_KUBE_AUTH);
  if (kubeAuth !== undefined) ((section('auth').kubernetes ??= {}) as Section).enabled = kubeAuth;
  const faults = values['enable-faults'] ?? truthy(env.PLUGBOARD_ENABLE_FAULTS);
  if (faults !== undefined) section('faults').enabled = faults;
  const insecure =
    values['insecure-allow-unauthenticated'] ?? truthy(env.PLUGBOARD_INSECURE_ALLOW_UNAUTHENTICATED);
  if (insecure !== undefined) section('auth').insecureAllowUnauthenticated = insecure;
  const origins =
    values['allowed-origin'] ??
    env.PLUGBOARD_ALLOWED_ORIGINS?.split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  if (origins !== undefined) section('stream').allowedOrigins = origins;

  return { help: false, config: parseGatewayConfig({ ...document, gateway: gw }, { source, env }) };
}
