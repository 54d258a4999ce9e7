// The web server's configuration, parsed once from the environment with zod. Nothing else in the
// server reads process.env.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { WebError } from './errors';

const gatewayUrl = z
  .string()
  .url()
  .refine((u) => /^https?:\/\//.test(u), 'must be an http:// or https:// URL')
  .transform((u) => u.replace(/\/+$/, ''));

const gatewayEntry = z.object({ name: z.string().min(1).max(253), url: gatewayUrl }).strict();
const gatewayFileSchema = z.union([
  z.array(gatewayEntry),
  z.object({ gateways: z.array(gatewayEntry) }).transform((o) => o.gateways),
]);

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).optional(),
  /** `next start`'s bind variable; honoured only when it is an IP literal (shells export HOSTNAME as the machine name). */
  HOSTNAME: z.string().optional(),
  NODE_ENV: z.enum(['development', 'production', 'test']).default('production'),
  /** Optional explicit mode; otherwise implied by which of the variables below is set. */
  PLUGBOARD_GATEWAY_DISCOVERY: z.enum(['static', 'kubernetes']).optional(),
  PLUGBOARD_GATEWAYS: z.string().optional(),
  PLUGBOARD_GATEWAYS_FILE: z.string().min(1).optional(),
  PLUGBOARD_GATEWAY_SELECTOR: z.string().min(1).optional(),
  PLUGBOARD_GATEWAY_NAMESPACE: z.string().min(1).default('plugboard'),
  PLUGBOARD_GATEWAY_PORT: z.coerce.number().int().min(1).max(65535).default(9400),
  PLUGBOARD_GATEWAY_SCHEME: z.enum(['http', 'https']).default('http'),
  /** Comma-separated extra origins allowed to open WebSockets (the server's own origin always is). */
  PLUGBOARD_ALLOWED_ORIGINS: z.string().default(''),
  PLUGBOARD_LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
  /** Service token the server uses for its own reads (summaries, streams); never for mutations. */
  PLUGBOARD_GATEWAY_TOKEN_FILE: z.string().min(1).optional(),
  /** "false" hides fault controls whatever the gateways allow (defence in depth for read-only installs). */
  PLUGBOARD_FAULTS_ENABLED: z.enum(['true', 'false']).default('true'),
  /** Forward mutations without a bearer token even when bound beyond loopback (not recommended). */
  PLUGBOARD_INSECURE_ALLOW_UNAUTHENTICATED: z.enum(['true', 'false']).default('false'),
  /** Upstream REST timeout. */
  PLUGBOARD_GATEWAY_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
});

export interface GatewayEntry {
  readonly name: string;
  readonly url: string;
}

export type DiscoveryConfig =
  | { readonly mode: 'static'; readonly source: string; readonly gateways: readonly GatewayEntry[] }
  | {
      readonly mode: 'kubernetes';
      readonly selector: string;
      readonly namespace: string;
      readonly port: number;
      readonly scheme: 'http' | 'https';
    };

export interface WebConfig {
  readonly port: number;
  readonly host: string;
  readonly dev: boolean;
  readonly discovery: DiscoveryConfig;
  readonly allowedOrigins: readonly string[];
  /** Bearer token for the server's own gateway reads, or null. */
  readonly readToken: string | null;
  readonly faultsEnabled: boolean;
  /** Mutations must carry a bearer token (bound beyond loopback, unless explicitly allowed). */
  readonly mutationsNeedToken: boolean;
  readonly logLevel: z.infer<typeof envSchema>['PLUGBOARD_LOG_LEVEL'];
  readonly gatewayTimeoutMs: number;
  /** Largest mutation body forwarded to a gateway. */
  readonly maxBodyBytes: number;
}

function fieldError(field: string, reason: string): WebError {
  return new WebError('config', `${field}: ${reason}`);
}

/** `name=url,name=url` (whitespace and newlines allowed as separators too). */
export function parseGatewayList(field: string, text: string): GatewayEntry[] {
  const out: GatewayEntry[] = [];
  for (const item of text
    .split(/[,\n]/)
    .map((s) => s.trim())
    .filter((s) => s && !s.startsWith('#'))) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw fieldError(field, `entry "${item}" is not NAME=URL`);
    const parsed = gatewayEntry.safeParse({ name: item.slice(0, eq).trim(), url: item.slice(eq + 1).trim() });
    if (!parsed.success)
      throw fieldError(field, `entry "${item}": ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    out.push(parsed.data);
  }
  const names = new Set<string>();
  for (const g of out) {
    if (names.has(g.name)) throw fieldError(field, `node "${g.name}" is listed twice`);
    names.add(g.name);
  }
  return out;
}

function readGatewayFile(path: string): GatewayEntry[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new WebError('config', `PLUGBOARD_GATEWAYS_FILE: cannot read ${path}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  if (/^\s*[[{]/.test(text)) {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw new WebError('config', `${path}: invalid JSON: ${(err as Error).message}`, { cause: err });
    }
    const parsed = gatewayFileSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new WebError(
        'config',
        `${path}: field ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`,
      );
    }
    return parsed.data;
  }
  return parseGatewayList(path, text);
}

export function loadWebConfig(env: Record<string, string | undefined> = process.env): WebConfig {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw fieldError(String(issue.path[0]), issue.message);
  }
  const e = parsed.data;
  const sources = [e.PLUGBOARD_GATEWAYS, e.PLUGBOARD_GATEWAYS_FILE, e.PLUGBOARD_GATEWAY_SELECTOR].filter(
    (v) => v !== undefined,
  );
  if (sources.length > 1) {
    throw fieldError(
      'PLUGBOARD_GATEWAYS',
      'set only one of PLUGBOARD_GATEWAYS, PLUGBOARD_GATEWAYS_FILE, PLUGBOARD_GATEWAY_SELECTOR',
    );
  }
  let discovery: DiscoveryConfig;
  if (e.PLUGBOARD_GATEWAY_DISCOVERY === 'kubernetes' && e.PLUGBOARD_GATEWAY_SELECTOR === undefined) {
    throw fieldError('PLUGBOARD_GATEWAY_SELECTOR', 'required when PLUGBOARD_GATEWAY_DISCOVERY=kubernetes');
  }
  if (e.PLUGBOARD_GATEWAY_DISCOVERY === 'static' && e.PLUGBOARD_GATEWAY_SELECTOR !== undefined) {
    throw fieldError('PLUGBOARD_GATEWAY_SELECTOR', 'not used when PLUGBOARD_GATEWAY_DISCOVERY=static');
  }
  if (e.PLUGBOARD_GATEWAY_SELECTOR !== undefined) {
    discovery = {
      mode: 'kubernetes',
      selector: e.PLUGBOARD_GATEWAY_SELECTOR,
      namespace: e.PLUGBOARD_GATEWAY_NAMESPACE,
      port: e.PLUGBOARD_GATEWAY_PORT,
      scheme: e.PLUGBOARD_GATEWAY_SCHEME,
    };
  } else if (e.PLUGBOARD_GATEWAYS_FILE !== undefined) {
    discovery = {
      mode: 'static',
      source: e.PLUGBOARD_GATEWAYS_FILE,
      gateways: readGatewayFile(e.PLUGBOARD_GATEWAYS_FILE),
    };
  } else {
    discovery = {
      mode: 'static',
      source: 'PLUGBOARD_GATEWAYS',
      gateways: parseGatewayList('PLUGBOARD_GATEWAYS', e.PLUGBOARD_GATEWAYS ?? ''),
    };
  }
  let readToken: string | null = null;
  if (e.PLUGBOARD_GATEWAY_TOKEN_FILE !== undefined) {
    try {
      readToken = readFileSync(e.PLUGBOARD_GATEWAY_TOKEN_FILE, 'utf8').trim() || null;
    } catch (err) {
      throw new WebError(
        'config',
        `PLUGBOARD_GATEWAY_TOKEN_FILE: cannot read ${e.PLUGBOARD_GATEWAY_TOKEN_FILE}: ${(err as Error).message}`,
        { cause: err },
      );
    }
  }
  const hostnameIsIp =
    e.HOSTNAME !== undefined && /^([0-9.]+|[0-9a-fA-F:]+)$/.test(e.HOSTNAME) && e.HOSTNAME.length > 1;
  const host = e.HOST ?? (hostnameIsIp ? e.HOSTNAME! : '127.0.0.1');
  const loopback = host === 'localhost' || host === '::1' || /^127\./.test(host);
  return Object.freeze({
    port: e.PORT,
    host,
    mutationsNeedToken: !loopback && e.PLUGBOARD_INSECURE_ALLOW_UNAUTHENTICATED !== 'true',
    readToken,
    faultsEnabled: e.PLUGBOARD_FAULTS_ENABLED === 'true',
    dev: e.NODE_ENV === 'development',
    discovery,
    allowedOrigins: e.PLUGBOARD_ALLOWED_ORIGINS.split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    logLevel: e.PLUGBOARD_LOG_LEVEL,
    gatewayTimeoutMs: e.PLUGBOARD_GATEWAY_TIMEOUT_MS,
    maxBodyBytes: 64 << 10,
  });
}
