// Running a command inside a built image without a container engine: `buildah from` makes a working
// container, `buildah run --isolation chroot` runs in it (no OCI runtime, which this sandbox refuses:
// crun cannot set RLIMIT_NOFILE; chroot isolation unshares only the mount and UTS namespaces, so the
// process shares the host's network and PID namespace and shows up in /proc with its host pid).
//
// Read-only root: buildah 1.28's `run` has no --read-only, so we do what the kubelet's
// readOnlyRootFilesystem does, by hand: one priming run (with the same volumes) lets buildah create
// its mount points (/dev, /proc, /sys, /etc/hosts, /etc/resolv.conf, /etc/hostname and every volume
// target), then the container's overlay is remounted read-only. buildah still writes and afterwards
// removes one file of its own, /run/.containerenv, so /run gets a bind mount of an empty host
// directory (root-owned 0755 — what the process writes there is visible to the caller and checked).
import { spawn, type ChildProcess } from 'node:child_process';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { capture } from './exec.js';

export interface Volume {
  host: string;
  container: string;
  readOnly?: boolean;
}

export interface RunOptions {
  /** `uid:gid`; default: the image's USER. */
  user?: string;
  env?: Record<string, string>;
  volumes?: Volume[];
  readOnlyRoot?: boolean;
  /** Capabilities to drop (`ALL` as in a pod's securityContext). */
  capDrop?: string[];
}

export interface ContainerProcess {
  /** The `buildah run` process. */
  child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit status (buildah passes the command's own through). */
  exited: Promise<number | null>;
  /** The host pid of the process started in the container (the first descendant running `argv0`). */
  findPid(argv0: string): number | null;
  /**
   * Files written to the /run directory lent to a read-only root (null without one): buildah's own
   * /run/.containerenv and the directories it makes for mount points are not counted.
   */
  runDirFiles(): string[] | null;
}

/**
 * A path inside the image with its symlinks resolved against the image's root, as runc and crun
 * resolve a mount's destination (distroless' /var/run is a symlink to /run; buildah's chroot
 * isolation silently drops a volume whose destination crosses a symlink).
 */
export function resolveInRoot(root: string, path: string): string {
  const rest = path.split('/').filter(Boolean);
  const done: string[] = [];
  for (let hops = 0; rest.length > 0;) {
    const name = rest.shift()!;
    let target: string;
    try {
      if (!lstatSync(join(root, ...done, name)).isSymbolicLink()) {
        done.push(name);
        continue;
      }
      target = readlinkSync(join(root, ...done, name));
    } catch {
      done.push(name, ...rest.splice(0));
      break;
    }
    if (++hops > 40) throw new Error(`${path}: too many symlinks in the image`);
    if (target.startsWith('/')) done.length = 0;
    rest.unshift(...target.split('/').filter(Boolean));
    for (let i = 0; i < rest.length && (rest[i] === '.' || rest[i] === '..');) {
      if (rest[i] === '..') done.pop();
      rest.splice(i, 1);
    }
  }
  return `/${done.join('/')}`;
}

function volumeArgs(root: string, volumes: readonly Volume[]): string[] {
  return volumes.flatMap((v) => [
    '--volume',
    `${v.host}:${resolveInRoot(root, v.container)}${v.readOnly ? ':ro' : ''}`,
  ]);
}

/** Host pids of every process whose parent chain leads to `root` (from /proc/<pid>/stat). */
export function descendants(root: number): number[] {
  const parent = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      parent.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // exited meanwhile
    }
  }
  const out: number[] = [];
  const frontier = [root];
  while (frontier.length > 0) {
    const pid = frontier.pop()!;
    for (const [child, ppid] of parent) {
      if (ppid === pid) {
        out.push(child);
        frontier.push(child);
      }
    }
  }
  return out;
}

function filesUnder(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`],
  );
}

export class WorkingContainer {
  readonly name: string;
  readonly mountPoint: string;
  private readonlyMounts: string[] = [];
  private runDirs: string[] = [];

  constructor(readonly image: string) {
    this.name = capture('buildah', ['from', '--pull-never', image]).trim();
    this.mountPoint = capture('buildah', ['mount', this.name]).trim();
  }

  start(command: string[], opts: RunOptions = {}): ContainerProcess {
    const volumes = [...(opts.volumes ?? [])];
    let runDir: string | null = null;
    const baseArgs = [
      'run',
      '--isolation',
      'chroot',
      ...(opts.user ? ['--user', opts.user] : []),
      ...(opts.capDrop ?? []).flatMap((c) => ['--cap-drop', c]),
      ...Object.entries(opts.env ?? {}).flatMap(([k, v]) => ['--env', `${k}=${v}`]),
    ];
    if (opts.readOnlyRoot) {
      // Priming run: buildah creates its mount points while the root is still writable.
      capture('buildah', [
        ...baseArgs,
        ...volumeArgs(this.mountPoint, volumes),
        this.name,
        '--',
        command[0]!,
        '--version',
      ]);
      capture('mount', ['-o', 'remount,ro', this.mountPoint]);
      this.readonlyMounts.push(this.mountPoint);
      runDir = mkdtempSync(join(tmpdir(), 'plugboard-run-'));
      this.runDirs.push(runDir);
      capture('mount', ['--bind', runDir, join(this.mountPoint, 'run')]);
      this.readonlyMounts.push(join(this.mountPoint, 'run'));
    }
    const child = spawn(
      'buildah',
      [...baseArgs, ...volumeArgs(this.mountPoint, volumes), this.name, '--', ...command],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (output += c.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    const buildahPid = child.pid!;
    return {
      child,
      output: () => output,
      exited,
      findPid(argv0) {
        for (const pid of descendants(buildahPid)) {
          try {
            const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
            if (argv[0] === argv0) return pid;
          } catch {
            // exited meanwhile
          }
        }
        return null;
      },
      runDirFiles: () => (runDir ? filesUnder(runDir).filter((f) => f !== '.containerenv') : null),
    };
  }

  /** Makes the root writable again (after a read-only run) so that buildah can clean up. */
  restoreRoot(): void {
    for (const mount of this.readonlyMounts.reverse()) {
      if (mount === this.mountPoint) capture('mount', ['-o', 'remount,rw', mount]);
      else capture('umount', [mount]);
    }
    this.readonlyMounts = [];
    for (const dir of this.runDirs) rmSync(dir, { recursive: true, force: true });
    this.runDirs = [];
  }

  remove(): void {
    this.restoreRoot();
    capture('buildah', ['rm', this.name]);
  }
}
