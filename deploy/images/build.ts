// `npm run images`: builds the gateway and web images from deploy/docker/*.Dockerfile with buildah
// (no Docker engine needed), writes them as OCI archives to dist/images/<component>.tar and prints
// their sizes. See docs/INSTALL.md "Container images".
//
//   npm run images                           bases: the public ones when a registry answers, else offline
//   npm run images -- --bases public         node:22-bookworm-slim + distroless (the Dockerfiles' defaults)
//   npm run images -- --bases offline        Debian packages + Node from the npm registry (bases.ts)
//   npm run images -- --only gateway         one image
//   npm run images -- --refresh-bases        rebuild the offline bases from today's Debian
//
// PLUGBOARD_IMAGE_BASES=public|offline|auto does what --bases does. Builds run with
// `--isolation chroot` (no OCI runtime: this also works where the sandbox refuses rlimit changes)
// and `--layers`, so a second build reuses every unchanged step. dist/images/images.json records
// what was built: names, digests, per-layer sizes, the bases and the build times.
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { ensureOfflineBases } from './bases.js';
import { capture, hasCommand, repoRoot, stream, succeeds } from './exec.js';
import {
  annotateLayout,
  fullyQualified,
  packLayout,
  summarizeLayout,
  type LayerSize,
  type OciConfig,
} from './oci-archive.js';
import { hostArch } from './pins.js';

export const COMPONENTS = ['gateway', 'web'] as const;
export type Component = (typeof COMPONENTS)[number];
export type BasesMode = 'public' | 'offline';

export const imagesDir = join(repoRoot, 'dist', 'images');
export const reportFile = join(imagesDir, 'images.json');

export interface BuiltImage {
  component: Component;
  /** Fully qualified name, as the archive's index names it (docker.io/plugboard/gateway:0.1.0). */
  name: string;
  /** The OCI archive, relative to the repository root (dist/images/<component>.tar). */
  archive: string;
  archiveBytes: number;
  manifestDigest: string;
  config: OciConfig;
  layers: LayerSize[];
  /** How many of `layers` are the runtime base's. */
  baseLayers: number;
  buildSeconds: number;
}

export interface ImagesReport {
  bases: { mode: BasesMode; why: string; build: string; runtime: string; seconds: number };
  arch: string;
  images: BuiltImage[];
  totalSeconds: number;
}

interface ChartDefaults {
  tag: string;
  repositories: Record<Component, string>;
}

function chartDefaults(): ChartDefaults {
  const chart = join(repoRoot, 'deploy/helm/plugboard');
  const appVersion = (parseYaml(readFileSync(join(chart, 'Chart.yaml'), 'utf8')) as { appVersion: unknown })
    .appVersion;
  const values = parseYaml(readFileSync(join(chart, 'values.yaml'), 'utf8')) as Record<
    Component,
    { image: { repository: string } }
  >;
  return {
    tag: String(appVersion),
    repositories: { gateway: values.gateway.image.repository, web: values.web.image.repository },
  };
}

/** The Dockerfile's `ARG NAME=default` value (its public base). */
export function dockerfileArg(component: Component, name: string): string {
  const text = readFileSync(join(repoRoot, `deploy/docker/${component}.Dockerfile`), 'utf8');
  const m = new RegExp(`^ARG ${name}=(\\S+)$`, 'm').exec(text);
  if (!m) throw new Error(`deploy/docker/${component}.Dockerfile has no ARG ${name}=…`);
  return m[1]!;
}

/** Public bases are used when present locally or when their registry answers. */
function publicBasesReachable(): { ok: boolean; why: string } {
  const bases = new Set(
    COMPONENTS.flatMap((c) => [dockerfileArg(c, 'NODE_IMAGE'), dockerfileArg(c, 'RUNTIME_IMAGE')]),
  );
  for (const base of bases) {
    const local = succeeds('buildah', ['inspect', '--type', 'image', base]);
    if (local) continue;
    const remote = succeeds(
      'skopeo',
      ['inspect', '--raw', '--retry-times', '0', `docker://${fullyQualified(base)}`],
      30_000,
    );
    if (!remote) return { ok: false, why: `${base} is neither local nor reachable` };
  }
  return { ok: true, why: `${[...bases].join(', ')} reachable or local` };
}

function chooseBases(requested: string): { mode: BasesMode; why: string } {
  if (requested === 'public' || requested === 'offline') return { mode: requested, why: 'requested' };
  if (requested !== 'auto') throw new Error(`--bases ${requested}: one of auto, public, offline`);
  if (!hasCommand('skopeo'))
    return { mode: 'offline', why: 'skopeo is not installed to probe the registries' };
  const probe = publicBasesReachable();
  return probe.ok ? { mode: 'public', why: probe.why } : { mode: 'offline', why: probe.why };
}

function requireTools(mode: BasesMode): void {
  const tools = ['buildah', 'tar', ...(mode === 'offline' ? ['mmdebstrap'] : [])];
  const missing = tools.filter((t) => !hasCommand(t));
  if (missing.length > 0) {
    throw new Error(
      `missing ${missing.join(', ')}: apt-get install -y buildah mmdebstrap skopeo (Debian/Ubuntu)`,
    );
  }
}

function gitRevision(): string | null {
  try {
    return capture('git', ['rev-parse', 'HEAD']).trim();
  } catch {
    return null;
  }
}

/** Diff IDs of a local image's layers (to tell the base's layers from the image's own). */
function diffIds(image: string): string[] {
  const info = JSON.parse(capture('buildah', ['inspect', '--type', 'image', image])) as {
    OCIv1?: { rootfs?: { diff_ids?: string[] } };
  };
  return info.OCIv1?.rootfs?.diff_ids ?? [];
}

export interface BuildOptions {
  bases?: string;
  only?: readonly Component[];
  refreshBases?: boolean;
}

export async function buildImages(opts: BuildOptions = {}): Promise<ImagesReport> {
  const t0 = performance.now();
  const { mode, why } = chooseBases(opts.bases ?? process.env.PLUGBOARD_IMAGE_BASES ?? 'auto');
  requireTools(mode);
  const arch = hostArch();
  log(`bases: ${mode} (${why})`);
  let bases: ImagesReport['bases'];
  if (mode === 'offline') {
    const offline = await ensureOfflineBases(arch, { refresh: opts.refreshBases ?? false });
    bases = { mode, why, build: offline.build, runtime: offline.runtime, seconds: offline.seconds };
  } else {
    bases = {
      mode,
      why,
      build: dockerfileArg('gateway', 'NODE_IMAGE'),
      runtime: dockerfileArg('gateway', 'RUNTIME_IMAGE'),
      seconds: 0,
    };
  }
  const { tag, repositories } = chartDefaults();
  const revision = gitRevision();
  mkdirSync(imagesDir, { recursive: true });
  const images: BuiltImage[] = [];
  for (const component of opts.only ?? COMPONENTS) {
    const name = fullyQualified(`${repositories[component]}:${tag}`);
    const started = performance.now();
    log(`building ${name} from deploy/docker/${component}.Dockerfile`);
    await stream(
      'buildah',
      [
        'build',
        '--isolation',
        'chroot',
        '--layers',
        '--format',
        'oci',
        '--file',
        `deploy/docker/${component}.Dockerfile`,
        '--tag',
        name,
        '--label',
        `org.opencontainers.image.version=${tag}`,
        ...(revision ? ['--label', `org.opencontainers.image.revision=${revision}`] : []),
        ...(mode === 'offline'
          ? ['--build-arg', `NODE_IMAGE=${bases.build}`, '--build-arg', `RUNTIME_IMAGE=${bases.runtime}`]
          : []),
        '.',
      ],
      { prefix: `[${component}]` },
    );
    const buildSeconds = (performance.now() - started) / 1000;
    const layout = join(imagesDir, `.${component}-layout`);
    const archive = join(imagesDir, `${component}.tar`);
    rmSync(layout, { recursive: true, force: true });
    capture('buildah', ['push', '--quiet', name, `oci:${layout}:${name}`]);
    annotateLayout(layout, name);
    const summary = await summarizeLayout(layout);
    packLayout(layout, archive);
    const base = diffIds(bases.runtime);
    const own = summary.config.rootfs.diff_ids;
    if (!base.every((id, i) => own[i] === id)) {
      throw new Error(`${name} does not start with the layers of its runtime base ${bases.runtime}`);
    }
    images.push({
      component,
      name,
      archive: relative(repoRoot, archive),
      archiveBytes: statSync(archive).size,
      manifestDigest: summary.manifestDigest,
      config: summary.config,
      layers: summary.layers,
      baseLayers: base.length,
      buildSeconds,
    });
  }
  const report: ImagesReport = { bases, arch, images, totalSeconds: (performance.now() - t0) / 1000 };
  writeFileSync(reportFile, `${JSON.stringify(report, null, 2)}\n`);
  return report;
}

const MB = (bytes: number) => (bytes / 1e6).toFixed(1);

/** Base and own bytes of an image, compressed (as in the archive) and unpacked. */
export function sizes(image: BuiltImage): {
  base: { compressed: number; uncompressed: number };
  added: { compressed: number; uncompressed: number };
} {
  const sum = (layers: LayerSize[], key: 'compressed' | 'uncompressed') =>
    layers.reduce((n, l) => n + l[key], 0);
  const base = image.layers.slice(0, image.baseLayers);
  const added = image.layers.slice(image.baseLayers);
  return {
    base: { compressed: sum(base, 'compressed'), uncompressed: sum(base, 'uncompressed') },
    added: { compressed: sum(added, 'compressed'), uncompressed: sum(added, 'uncompressed') },
  };
}

export function formatReport(report: ImagesReport): string {
  const lines = [
    `bases: ${report.bases.mode} — build ${report.bases.build}, runtime ${report.bases.runtime}` +
      (report.bases.seconds > 0 ? ` (built in ${report.bases.seconds.toFixed(0)} s)` : ''),
    '',
    'image                               archive   base (gz / unpacked)   added by the image (gz / unpacked)   build',
  ];
  for (const image of report.images) {
    const s = sizes(image);
    lines.push(
      `${image.archive.padEnd(36)}${`${MB(image.archiveBytes)} MB`.padStart(8)}   ` +
        `${`${MB(s.base.compressed)} / ${MB(s.base.uncompressed)} MB`.padEnd(23)}` +
        `${`${MB(s.added.compressed)} / ${MB(s.added.uncompressed)} MB`.padEnd(37)}` +
        `${image.buildSeconds.toFixed(0)} s`,
    );
  }
  lines.push('', `${report.images.map((i) => i.name).join(', ')}; total ${report.totalSeconds.toFixed(0)} s`);
  return lines.join('\n');
}

function log(message: string): void {
  process.stderr.write(`[images] ${message}\n`);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      bases: { type: 'string' },
      only: { type: 'string' },
      'refresh-bases': { type: 'boolean' },
    },
  });
  const only = values.only?.split(',').map((c) => {
    if (!(COMPONENTS as readonly string[]).includes(c))
      throw new Error(`--only ${c}: one of ${COMPONENTS.join(', ')}`);
    return c as Component;
  });
  const report = await buildImages({
    ...(values.bases ? { bases: values.bases } : {}),
    ...(only ? { only } : {}),
    refreshBases: values['refresh-bases'] ?? false,
  });
  process.stdout.write(`${formatReport(report)}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    process.stderr.write(`[images] ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
