// Shared pieces of the gateway's reliability tests: a kubelet-sim + gateway pair in a temporary
// directory (the test bed's simulated node, the gateway in-process on gatewayDocument's config), process handle counts (/proc/self/fd), listening Unix sockets (/proc/net/unix),
// a tiny REST client and a Unix-socket relay that makes a socket path appear and disappear.
import { mkdtempSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import type { KubeletSim, KubeletSimOptions } from '@plugboard/kubelet-sim';
import { gatewayDocument, simNode, type SimNode } from '@plugboard/testbed';
import { parseGatewayConfig, startGateway, type Gateway, type GatewaySectionInput } from '../../src/index.js';
import type { NodeSnapshot } from '@plugboard/api';
import { waitFor as waitForCondition } from '../helpers.js';

export const GPU = 'plugboard.example/gpu';
export const NIC = 'plugboard.example/nic';
export const TOKEN = 'reliability-token-0123456789';
export const silent = pino({ level: 'silent' });

export const RESOURCES = [
  { name: GPU, simulated: { count: 8, numaNodes: [0, 1] } },
  { name: NIC, simulated: { count: 32, numaNodes: [0, 1] } },
];

export interface Rig {
  dir: string;
  node: SimNode;
  sim: KubeletSim;
  gw: Gateway;
  tokenFile: string;
  /** Starts (another) gateway on the same kubelet with config overrides. */
  startGateway(overrides?: GatewaySectionInput, logger?: Logger, resources?: unknown[]): Promise<Gateway>;
  stop(): Promise<void>;
}

export function gatewayConfig(
  rig: Pick<Rig, 'dir' | 'node' | 'tokenFile'>,
  overrides: GatewaySectionInput = {},
  resources: unknown[] = RESOURCES,
) {
  const document = gatewayDocument(rig.node, {
    resources,
    stateDir: join(rig.dir, 'gateway-state'),
    tokenFile: rig.tokenFile,
    gateway: { podResources: { pollIntervalMs: 200, maxBackoffMs: 400 }, kube: { maxBackoffMs: 500 } },
  });
  // An override replaces a whole section (a test that sets `podResources` gets only what it says).
  return parseGatewayConfig({ ...document, gateway: { ...document.gateway, ...overrides } });
}

/** kubelet-sim + gateway (plugins in-process) in a fresh temporary directory. */
export async function startRig(
  options: {
    /** Gateway overrides, or a function of the started kubelet-sim returning them. */
    gateway?:
      | GatewaySectionInput
      | ((sim: KubeletSim, dir: string) => GatewaySectionInput | Promise<GatewaySectionInput>);
    sim?: Partial<KubeletSimOptions>;
    logger?: Logger;
    resources?: unknown[];
  } = {},
): Promise<Rig> {
  const dir = mkdtempSync(join(tmpdir(), 'pb-rel-'));
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, `${TOKEN}\n`);
  const node = await simNode(dir, 'rel-node', {
    sim: { listen: '127.0.0.1:0', podResourcesRateLimit: false, ...options.sim },
  });
  const sim = node.sim;
  const gateways: Gateway[] = [];
  const rig: Rig = {
    dir,
    node,
    sim,
    tokenFile,
    gw: undefined as unknown as Gateway,
    async startGateway(overrides = {}, logger = silent, resources = options.resources ?? RESOURCES) {
      const g = await startGateway(gatewayConfig(rig, overrides, resources), { logger });
      gateways.push(g);
      return g;
    },
    async stop() {
      for (const g of gateways.splice(0).reverse()) await g.stop();
      await node.remove();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    const overrides =
      typeof options.gateway === 'function' ? await options.gateway(sim, dir) : options.gateway;
    rig.gw = await rig.startGateway(overrides ?? {}, options.logger ?? silent);
    await waitFor(
      'plugins registered',
      async () => (await fetch(`${rig.gw.url}/readyz`)).status === 200,
      20_000,
    );
  } catch (err) {
    await rig.stop();
    throw err;
  }
  return rig;
}

/** The gateway tests' waitFor, with the longer default deadline the reliability scenarios need. */
export const waitFor = <T>(
  what: string,
  fn: () => T | undefined | false | null | Promise<T | undefined | false | null>,
  timeoutMs = 10_000,
  intervalMs = 10,
): Promise<T> => waitForCondition(what, fn, timeoutMs, intervalMs);

export const snapshotOf = async (gw: Gateway | string): Promise<NodeSnapshot> =>
  (await (await fetch(`${typeof gw === 'string' ? gw : gw.url}/api/v1/node`)).json()) as NodeSnapshot;

export interface ApiAnswer {
  status: number;
  type: string | null;
  headers: Headers;
  body: Record<string, unknown> | null;
  text: string;
}

export async function api(base: string, path: string, init: RequestInit = {}): Promise<ApiAnswer> {
  const res = await fetch(`${base}${path}`, init);
  const text = await res.text();
  let body: Record<string, unknown> | null = null;
  try {
    body = text ? (JSON.parse(text) as Record<string, unknown>) : null;
  } catch {
    body = null;
  }
  return { status: res.status, type: res.headers.get('content-type'), headers: res.headers, body, text };
}

export const bearer = (token = TOKEN) => ({ authorization: `Bearer ${token}` });
export const JSON_TYPE = { 'content-type': 'application/json' };

/** Open file descriptors of this process. */
export const fdCount = (pid: number | 'self' = 'self'): number => readdirSync(`/proc/${pid}/fd`).length;

/** Resident set size of a process in bytes. */
export function rssOf(pid: number | 'self' = 'self'): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

/** Unix socket paths under `dir` that something is listening on (any process), with duplicates. */
export function listeningUnixSockets(dir: string): string[] {
  const out: string[] = [];
  for (const line of readFileSync('/proc/net/unix', 'utf8').split('\n').slice(1)) {
    const cols = line.trim().split(/\s+/);
    // Num RefCount Protocol Flags Type St Inode Path; Flags 00010000 = __SO_ACCEPTCON (listening).
    if (cols.length >= 8 && cols[3] === '00010000' && cols[7]!.startsWith(dir)) out.push(cols[7]!);
  }
  return out.sort();
}

/** Socket files in a directory (not recursive). */
export const socketFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isSocket())
    .map((e) => e.name)
    .sort();

/**
 * A Unix-socket relay at `path` forwarding every connection to `target`: `up()` makes the path
 * appear, `down()` removes it and cuts every open connection (what a vanished kubelet looks like).
 */
export class UnixRelay {
  private server: Server | null = null;
  private readonly conns = new Set<Socket>();
  constructor(
    readonly path: string,
    private readonly target: string,
  ) {}

  async up(): Promise<void> {
    if (this.server) return;
    const server = createServer((client) => {
      const upstream = createConnection(this.target);
      for (const s of [client, upstream]) {
        this.conns.add(s);
        s.on('close', () => this.conns.delete(s));
        s.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.path, () => resolve());
    });
    this.server = server;
  }

  async down(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    for (const c of this.conns) c.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    try {
      unlinkSync(this.path);
    } catch {
      // already gone (net.Server.close unlinks it)
    }
  }
}

/** A pino logger whose JSON lines are kept in memory (to assert on, or to scan for secrets). */
export function capturedLogger(level = 'debug'): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const logger = pino({ level }, { write: (s: string) => void lines.push(s) });
  return { logger, lines };
}
