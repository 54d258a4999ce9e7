// plugboard-cluster: a real Kubernetes on this machine, built from upstream source.
//   plugboard-cluster up --nodes N --dir DIR [--apiserver-port P] [--topology-manager-policy P]
//   plugboard-cluster down --dir DIR
//   plugboard-cluster status --dir DIR [--json]
//   plugboard-cluster node add|restart-kubelet|remove --dir DIR --name NAME
//   plugboard-cluster build            build (or find) the binaries; prints their directory
//   plugboard-cluster which BINARY     the path of a built binary (kubectl, kubelet, …)
//   plugboard-cluster build-third-party  build (or find) the third-party plugins and drivers the test bed runs
// `up` prints one JSON line on stdout (the kubeconfig and each node's directories); progress and
// errors go to stderr. Every failure exits non-zero with a message saying what to do.
import { parseArgs } from 'node:util';
import { ensureBinaries, type BinaryName, type BuildProgress } from './binaries.js';
import {
  addNode,
  assertNodeSocketsFit,
  CONTROL_PLANE_COMPONENTS,
  defaultNodeNames,
  down,
  readState,
  removeNode,
  restartKubelet,
  status,
  up,
  type ControlPlaneComponent,
} from './cluster.js';
import { LocalClusterError } from './errors.js';
import type { TopologyManagerPolicy } from './kubelet-config.js';
import { stopStartedHere } from './processes.js';
import { clusterInfo } from './state.js';
import {
  ensureThirdPartyBinary,
  THIRD_PARTY_BINARIES,
  THIRD_PARTY_NAMES,
  thirdPartyLabel,
} from './third-party.js';
import { KUBERNETES_VERSION } from './versions.js';

const USAGE = `usage:
  plugboard-cluster up --nodes N --dir DIR [--apiserver-port P] [--topology-manager-policy none|best-effort|restricted|single-numa-node]
                       [--component-arg COMPONENT=ARG …]   (etcd, kube-apiserver, kube-controller-manager, kube-scheduler)
  plugboard-cluster down --dir DIR
  plugboard-cluster status --dir DIR [--json]
  plugboard-cluster node add|restart-kubelet|remove --dir DIR --name NAME
  plugboard-cluster build
  plugboard-cluster build-third-party
  plugboard-cluster which BINARY`;

const POLICIES = new Set(['none', 'best-effort', 'restricted', 'single-numa-node']);

function progressPrinter(): (p: BuildProgress) => void {
  const tty = process.stderr.isTTY;
  let lastPrinted = 0;
  return (p) => {
    const now = Date.now();
    if (!tty && now - lastPrinted < 15_000 && p.done !== p.total) return;
    lastPrinted = now;
    const secs = Math.round(p.elapsedMs / 1000);
    const line = `building Kubernetes ${KUBERNETES_VERSION} from source (first time only): ${p.done}/${p.total} packages, ${Math.floor(secs / 60)}m${String(secs % 60).padStart(2, '0')}s`;
    process.stderr.write(tty ? `\r${line}` : `${line}\n`);
  };
}

function int(value: string | undefined, flag: string, min: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min)
    throw new LocalClusterError('usage', `${flag}: expected a whole number ≥ ${min}, got "${value}"`);
  return n;
}

function requireDir(dir: string | undefined): string {
  if (!dir) throw new LocalClusterError('usage', `--dir is required\n${USAGE}`);
  return dir;
}

export async function main(argv: string[]): Promise<number> {
  const log = (line: string): void => void process.stderr.write(`plugboard-cluster: ${line}\n`);
  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (interrupted) return;
    interrupted = true;
    log(`${signal}: stopping what was started`);
    void stopStartedHere().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        nodes: { type: 'string' },
        dir: { type: 'string' },
        name: { type: 'string' },
        'apiserver-port': { type: 'string' },
        'topology-manager-policy': { type: 'string' },
        'component-arg': { type: 'string', multiple: true },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
    const [command, sub] = positionals;
    if (values.help || !command) {
      process.stdout.write(`${USAGE}\n`);
      return values.help ? 0 : 2;
    }
    const policy = values['topology-manager-policy'];
    if (policy !== undefined && !POLICIES.has(policy)) {
      throw new LocalClusterError(
        'usage',
        `--topology-manager-policy: expected one of ${[...POLICIES].join(', ')}, got "${policy}"`,
      );
    }
    switch (command) {
      case 'build': {
        const bins = await ensureBinaries({ onProgress: progressPrinter() });
        process.stdout.write(`${bins.dir}\n`);
        return 0;
      }
      case 'build-third-party': {
        // Upstream's sample device plugin and DRA test driver are built with the Kubernetes
        // binaries; then the others, one after another: each build already keeps both cores busy.
        const bins = await ensureBinaries({ onProgress: progressPrinter() });
        for (const name of ['sample-device-plugin', 'dra-test-driver'] as const)
          process.stdout.write(`${name} ${bins[name]}\n`);
        for (const name of THIRD_PARTY_NAMES) {
          const path = await ensureThirdPartyBinary(name, {
            onBuild: ({ phase, ms }) =>
              log(
                phase === 'start'
                  ? `building ${thirdPartyLabel(THIRD_PARTY_BINARIES[name])} (first time only)`
                  : `built ${name} in ${Math.round(ms / 1000)} s`,
              ),
          });
          process.stdout.write(`${name} ${path}\n`);
        }
        return 0;
      }
      case 'which': {
        if (!sub) throw new LocalClusterError('usage', `which: name a binary\n${USAGE}`);
        const bins = await ensureBinaries({ onProgress: progressPrinter() });
        const path = (bins as unknown as Record<string, string>)[sub as BinaryName];
        if (!path || sub === 'dir') throw new LocalClusterError('usage', `which: no binary "${sub}"`);
        process.stdout.write(`${path}\n`);
        return 0;
      }
      case 'up': {
        const nodes = int(values.nodes, '--nodes', 0);
        if (nodes === undefined) throw new LocalClusterError('usage', `up: --nodes is required\n${USAGE}`);
        const dir = requireDir(values.dir);
        assertNodeSocketsFit(dir, defaultNodeNames(nodes));
        if (process.getuid?.() !== 0) {
          // Before the long build: the cluster cannot start anyway.
          throw new LocalClusterError(
            'not-root',
            'plugboard-cluster up must run as root (the kubelet mounts directories and manages cgroups): run it with sudo',
          );
        }
        const bins = await ensureBinaries({ onProgress: progressPrinter() });
        const started = Date.now();
        const componentArgs: Partial<Record<ControlPlaneComponent, string[]>> = {};
        for (const spec of values['component-arg'] ?? []) {
          const eq = spec.indexOf('=');
          const component = spec.slice(0, eq) as ControlPlaneComponent;
          if (eq < 0 || !CONTROL_PLANE_COMPONENTS.includes(component)) {
            throw new LocalClusterError(
              'usage',
              `--component-arg: expected COMPONENT=ARG with COMPONENT one of ${CONTROL_PLANE_COMPONENTS.join(', ')}, got "${spec}"`,
            );
          }
          (componentArgs[component] ??= []).push(spec.slice(eq + 1));
        }
        const info = await up(bins, {
          dir,
          nodes,
          componentArgs,
          apiserverPort: int(values['apiserver-port'], '--apiserver-port', 0),
          ...(policy ? { topologyManagerPolicy: policy as TopologyManagerPolicy } : {}),
          log,
        });
        log(`up in ${((Date.now() - started) / 1000).toFixed(1)} s: KUBECONFIG=${info.kubeconfig}`);
        process.stdout.write(`${JSON.stringify(info)}\n`);
        return 0;
      }
      case 'down': {
        const { stopped } = await down(requireDir(values.dir));
        log(stopped.length ? `stopped ${stopped.join(', ')}` : 'nothing was running');
        return 0;
      }
      case 'status': {
        const { info, components } = status(requireDir(values.dir));
        if (values.json) {
          process.stdout.write(`${JSON.stringify({ ...info, components })}\n`);
        } else {
          const width = Math.max(...components.map((c) => c.name.length), 9);
          process.stdout.write(`${'COMPONENT'.padEnd(width)}  STATE  PID      LOG\n`);
          for (const c of components) {
            process.stdout.write(
              `${c.name.padEnd(width)}  ${(c.up ? 'up' : 'down').padEnd(5)}  ${String(c.pid).padEnd(7)}  ${c.log}\n`,
            );
          }
        }
        return components.every((c) => c.up) ? 0 : 1;
      }
      case 'node': {
        const dir = requireDir(values.dir);
        const name = values.name;
        if (!name) throw new LocalClusterError('usage', `node ${sub ?? ''}: --name is required`);
        const state = readState(dir);
        if (sub === 'add') {
          const bins = await ensureBinaries({ onProgress: progressPrinter() });
          await addNode(
            bins,
            state,
            { name, ...(policy ? { topologyManagerPolicy: policy as TopologyManagerPolicy } : {}) },
            { log },
          );
          process.stdout.write(`${JSON.stringify(clusterInfo(state))}\n`);
        } else if (sub === 'restart-kubelet') {
          const bins = await ensureBinaries();
          await restartKubelet(bins, state, name);
        } else if (sub === 'remove') {
          await removeNode(state, name);
        } else {
          throw new LocalClusterError('usage', `node: expected add, restart-kubelet or remove\n${USAGE}`);
        }
        return 0;
      }
      default:
        throw new LocalClusterError('usage', `unknown command "${command}"\n${USAGE}`);
    }
  } catch (err) {
    const e = err instanceof LocalClusterError ? err : LocalClusterError.from(err);
    log(e.message);
    return e.code === 'usage' ? 2 : 1;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
