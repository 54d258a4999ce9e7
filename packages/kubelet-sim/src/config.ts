// Command-line configuration of plugboard-kubelet-sim, parsed once with zod into a frozen object.
// Errors name the flag and the reason; the CLI prints them and exits 2.

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { KubeletSimError } from './errors.js';
import type { KubeletSimOptions } from './types.js';
import { parseCpuList } from './machine/node-shape.js';
import { parseQuantity, TOPOLOGY_MANAGER_POLICIES, TOPOLOGY_MANAGER_SCOPES } from '@plugboard/topology';

export const USAGE = `Usage: plugboard-kubelet-sim --device-plugin-dir DIR --state-dir DIR [options]

A kubelet stand-in: device-plugin Registration on DIR/kubelet.sock, simulated pods, PodResources v1,
and a read-only Kubernetes API slice plus a control API on --listen.

Options:
  --device-plugin-dir DIR        device-plugin directory (the kubelet's /var/lib/kubelet/device-plugins)
  --state-dir DIR                kubeconfig and the default PodResources socket live here
  --node-name NAME               node name (default sim-node)
  --listen HOST:PORT             Kubernetes API slice + /control/v1/ (default 127.0.0.1:0)
  --pod-resources-socket PATH    default STATE_DIR/pod-resources/kubelet.sock
  --plugins-registry-dir DIR     plugin watcher directory (pluginregistration v1): device plugins and DRA drivers
  --cpus N                       logical CPUs (default 8)
  --numa-nodes M                 NUMA nodes; CPUs are split evenly (default 1)
  --memory-per-numa QUANTITY     memory per NUMA node, e.g. 16Gi (default 16Gi)
  --threads-per-core N           SMT siblings per core (default 2 when every NUMA node has an even CPU count)
  --hugepages-2mi-per-numa Q     pre-allocated 2Mi hugepages per NUMA node, e.g. 1Gi (default 0)
  --hugepages-1gi-per-numa Q     pre-allocated 1Gi hugepages per NUMA node, e.g. 4Gi (default 0)
  --max-pods N                   pods the node admits (default 110)
  --grace-period DURATION        how long a gone plugin keeps capacity (default 5m)
  --crash-loop-backoff D[:MAX]   crash-loop back-off start and cap (default 10s:5m)
  --sync-frequency DURATION      retry of a pod whose DRA prepare failed (default 1m)
  --dra-wiping-delay DURATION    a gone DRA driver's ResourceSlices are deleted after it (default 30s)
  --pod-resources-rate-limit Q:B PodResources token bucket (default 100:10); "off" disables it
  --cpu-manager-policy P         static (default) or none
  --memory-manager-policy P      Static (default) or None
  --reserved-cpus LIST           reservedSystemCPUs, a cpulist such as 0-1 (never exclusive, off allocatable)
  --topology-manager-policy P    none, best-effort (default), restricted or single-numa-node
  --topology-manager-scope S     container (default) or pod
  --control-token-file FILE      bearer token for mutations (required beyond loopback)
  --log-level LEVEL              trace|debug|info|warn|error|silent (default info)
  -h, --help                     show this help
`;

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/;
const UNIT: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

function duration(flag: string) {
  return z.string().transform((v, ctx) => {
    const m = DURATION.exec(v);
    if (!m) {
      ctx.addIssue({
        code: 'custom',
        message: `${flag}: expected a duration such as 250ms, 30s or 5m, got "${v}"`,
      });
      return z.NEVER;
    }
    return Number(m[1]) * UNIT[m[2]!]!;
  });
}

function memoryQuantity(flag: string, example: string) {
  return z.string().transform((v, ctx) => {
    const n = parseQuantity(v);
    if (n === undefined || n < 0) {
      ctx.addIssue({
        code: 'custom',
        message: `${flag}: expected a quantity such as ${example}, got "${v}"`,
      });
      return z.NEVER;
    }
    return n;
  });
}

function positiveInt(flag: string) {
  return z.string().transform((v, ctx) => {
    const n = Number(v);
    if (!/^\d+$/.test(v) || n < 1) {
      ctx.addIssue({ code: 'custom', message: `${flag}: expected a positive integer, got "${v}"` });
      return z.NEVER;
    }
    return n;
  });
}

const flagsSchema = z.object({
  'device-plugin-dir': z
    .string({ error: '--device-plugin-dir: required' })
    .min(1, '--device-plugin-dir: required'),
  'state-dir': z.string({ error: '--state-dir: required' }).min(1, '--state-dir: required'),
  'node-name': z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, '--node-name: must be a lowercase RFC 1123 subdomain')
    .default('sim-node'),
  listen: z.string().default('127.0.0.1:0'),
  'pod-resources-socket': z.string().optional(),
  'plugins-registry-dir': z.string().min(1).optional(),
  cpus: positiveInt('--cpus').optional(),
  'numa-nodes': positiveInt('--numa-nodes').optional(),
  'max-pods': positiveInt('--max-pods').optional(),
  'memory-per-numa': z
    .string()
    .transform((v, ctx) => {
      const n = parseQuantity(v);
      if (n === undefined || n <= 0) {
        ctx.addIssue({
          code: 'custom',
          message: `--memory-per-numa: expected a quantity such as 16Gi, got "${v}"`,
        });
        return z.NEVER;
      }
      return n;
    })
    .optional(),
  'grace-period': duration('--grace-period').optional(),
  'sync-frequency': duration('--sync-frequency').optional(),
  'dra-wiping-delay': duration('--dra-wiping-delay').optional(),
  'crash-loop-backoff': z
    .string()
    .transform((v, ctx) => {
      const [a, b] = v.split(':');
      const initial = DURATION.exec(a ?? '');
      const max = b === undefined ? null : DURATION.exec(b);
      if (!initial || (b !== undefined && !max)) {
        ctx.addIssue({
          code: 'custom',
          message: `--crash-loop-backoff: expected DURATION[:MAX] such as 1s:10s, got "${v}"`,
        });
        return z.NEVER;
      }
      const initialMs = Number(initial[1]) * UNIT[initial[2]!]!;
      return { initialMs, maxMs: max ? Number(max[1]) * UNIT[max[2]!]! : Math.max(initialMs, 300_000) };
    })
    .optional(),
  'pod-resources-rate-limit': z
    .string()
    .transform((v, ctx) => {
      if (v === 'off') return false as const;
      const m = /^(\d+(?:\.\d+)?):(\d+)$/.exec(v);
      if (!m || Number(m[1]) <= 0 || Number(m[2]) < 1) {
        ctx.addIssue({
          code: 'custom',
          message: `--pod-resources-rate-limit: expected QPS:BURST such as 100:10, or "off", got "${v}"`,
        });
        return z.NEVER;
      }
      return { qps: Number(m[1]), burst: Number(m[2]) };
    })
    .optional(),
  'threads-per-core': positiveInt('--threads-per-core').optional(),
  'hugepages-2mi-per-numa': memoryQuantity('--hugepages-2mi-per-numa', '1Gi').optional(),
  'hugepages-1gi-per-numa': memoryQuantity('--hugepages-1gi-per-numa', '4Gi').optional(),
  'reserved-cpus': z
    .string()
    .transform((v, ctx) => {
      const list = parseCpuList(v);
      if (!list) {
        ctx.addIssue({
          code: 'custom',
          message: `--reserved-cpus: expected a cpulist such as 0-1,8, got "${v}"`,
        });
        return z.NEVER;
      }
      return list;
    })
    .optional(),
  'topology-manager-policy': z
    .enum(TOPOLOGY_MANAGER_POLICIES, {
      error: '--topology-manager-policy: expected none, best-effort, restricted or single-numa-node',
    })
    .optional(),
  'topology-manager-scope': z
    .enum(TOPOLOGY_MANAGER_SCOPES, { error: '--topology-manager-scope: expected container or pod' })
    .optional(),
  'cpu-manager-policy': z
    .enum(['none', 'static'], { error: '--cpu-manager-policy: expected none or static' })
    .optional(),
  'memory-manager-policy': z
    .enum(['None', 'Static'], { error: '--memory-manager-policy: expected None or Static' })
    .optional(),
  'control-token-file': z.string().optional(),
  'log-level': z
    .enum(['trace', 'debug', 'info', 'warn', 'error', 'silent'], {
      error: '--log-level: expected trace, debug, info, warn, error or silent',
    })
    .default('info'),
});

export interface CliConfig {
  help: boolean;
  logLevel: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'silent';
  options: Omit<KubeletSimOptions, 'logger'>;
}

const STRING_FLAGS = [
  'device-plugin-dir',
  'state-dir',
  'node-name',
  'listen',
  'pod-resources-socket',
  'plugins-registry-dir',
  'cpus',
  'numa-nodes',
  'max-pods',
  'memory-per-numa',
  'grace-period',
  'sync-frequency',
  'dra-wiping-delay',
  'crash-loop-backoff',
  'pod-resources-rate-limit',
  'cpu-manager-policy',
  'memory-manager-policy',
  'threads-per-core',
  'hugepages-2mi-per-numa',
  'hugepages-1gi-per-numa',
  'reserved-cpus',
  'topology-manager-policy',
  'topology-manager-scope',
  'control-token-file',
  'log-level',
] as const;

export function parseCliConfig(argv: string[]): Readonly<CliConfig> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        ...Object.fromEntries(STRING_FLAGS.map((f) => [f, { type: 'string' as const }])),
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    throw new KubeletSimError('Config', err instanceof Error ? err.message : String(err), { cause: err });
  }
  if (values['help'])
    return Object.freeze({ help: true, logLevel: 'info', options: { devicePluginDir: '', stateDir: '' } });
  const parsed = flagsSchema.safeParse(values);
  if (!parsed.success)
    throw new KubeletSimError('Config', parsed.error.issues.map((i) => i.message).join('; '));
  const v = parsed.data;
  let controlToken: string | undefined;
  if (v['control-token-file']) {
    try {
      controlToken = readFileSync(v['control-token-file'], 'utf8').trim();
    } catch (err) {
      throw new KubeletSimError(
        'Config',
        `--control-token-file: cannot read ${v['control-token-file']}: ${(err as Error).message}`,
        { cause: err },
      );
    }
    if (!controlToken)
      throw new KubeletSimError('Config', `--control-token-file: ${v['control-token-file']} is empty`);
  }
  const options: Omit<KubeletSimOptions, 'logger'> = {
    devicePluginDir: v['device-plugin-dir'],
    stateDir: v['state-dir'],
    nodeName: v['node-name'],
    listen: v.listen,
    ...(v['pod-resources-socket'] ? { podResourcesSocket: v['pod-resources-socket'] } : {}),
    ...(v['plugins-registry-dir'] ? { pluginsRegistryDir: v['plugins-registry-dir'] } : {}),
    ...(v.cpus !== undefined ? { cpus: v.cpus } : {}),
    ...(v['numa-nodes'] !== undefined ? { numaNodes: v['numa-nodes'] } : {}),
    ...(v['max-pods'] !== undefined ? { maxPods: v['max-pods'] } : {}),
    ...(v['memory-per-numa'] !== undefined ? { memoryPerNumaBytes: v['memory-per-numa'] } : {}),
    ...(v['grace-period'] !== undefined ? { gracePeriodMs: v['grace-period'] } : {}),
    ...(v['sync-frequency'] !== undefined ? { syncFrequencyMs: v['sync-frequency'] } : {}),
    ...(v['dra-wiping-delay'] !== undefined ? { draWipingDelayMs: v['dra-wiping-delay'] } : {}),
    ...(v['crash-loop-backoff'] ? { crashLoopBackOff: v['crash-loop-backoff'] } : {}),
    ...(v['pod-resources-rate-limit'] !== undefined
      ? { podResourcesRateLimit: v['pod-resources-rate-limit'] }
      : {}),
    ...(v['cpu-manager-policy'] ? { cpuManagerPolicy: v['cpu-manager-policy'] } : {}),
    ...(v['memory-manager-policy'] ? { memoryManagerPolicy: v['memory-manager-policy'] } : {}),
    ...(v['threads-per-core'] !== undefined ? { threadsPerCore: v['threads-per-core'] } : {}),
    ...(v['hugepages-2mi-per-numa'] !== undefined || v['hugepages-1gi-per-numa'] !== undefined
      ? {
          hugepagesPerNumaBytes: {
            ...(v['hugepages-2mi-per-numa'] !== undefined
              ? { 'hugepages-2Mi': v['hugepages-2mi-per-numa'] }
              : {}),
            ...(v['hugepages-1gi-per-numa'] !== undefined
              ? { 'hugepages-1Gi': v['hugepages-1gi-per-numa'] }
              : {}),
          },
        }
      : {}),
    ...(v['reserved-cpus'] ? { reservedCpus: v['reserved-cpus'] } : {}),
    ...(v['topology-manager-policy'] ? { topologyManagerPolicy: v['topology-manager-policy'] } : {}),
    ...(v['topology-manager-scope'] ? { topologyManagerScope: v['topology-manager-scope'] } : {}),
    ...(controlToken ? { controlToken } : {}),
  };
  return Object.freeze({ help: false, logLevel: v['log-level'], options: Object.freeze(options) });
}
