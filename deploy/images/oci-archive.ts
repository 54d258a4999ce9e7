// OCI archives that every local image loader takes. `buildah push … oci:DIR:REF` writes an OCI
// image layout whose index names the image only by `org.opencontainers.image.ref.name`; containerd
// (`ctr images import`, which `kind load image-archive` and `k3s ctr images import` run) names an
// imported image by `io.containerd.image.name` and otherwise prefixes the ref name with
// `import-<date>`, so the index gets both, with the fully qualified name (docker.io/…: what the
// kubelet asks containerd for when a pod says `plugboard/gateway:0.1.0`). `podman load` reads the
// ref name. The layout is then packed as a plain tar: oci-layout, index.json, blobs/.
import { createReadStream, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createGunzip } from 'node:zlib';
import { capture } from './exec.js';

export const CONTAINERD_NAME = 'io.containerd.image.name';
export const OCI_REF_NAME = 'org.opencontainers.image.ref.name';

interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
}
export interface OciIndex {
  schemaVersion: number;
  manifests: Descriptor[];
}
export interface OciManifest {
  config: Descriptor;
  layers: Descriptor[];
}
export interface OciConfig {
  architecture: string;
  os: string;
  config: {
    User?: string;
    Env?: string[];
    Entrypoint?: string[];
    Cmd?: string[];
    WorkingDir?: string;
    ExposedPorts?: Record<string, unknown>;
    Labels?: Record<string, string>;
  };
  rootfs: { diff_ids: string[] };
}

/** Docker's reference normalisation: `plugboard/gateway:0.1.0` → `docker.io/plugboard/gateway:0.1.0`. */
export function fullyQualified(ref: string): string {
  const first = ref.split('/')[0]!;
  const hasRegistry =
    ref.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost');
  if (hasRegistry) return ref;
  return ref.includes('/') ? `docker.io/${ref}` : `docker.io/library/${ref}`;
}

const blobPath = (layout: string, digest: string) => join(layout, 'blobs', ...digest.split(':'));
const readJson = <T>(file: string): T => JSON.parse(readFileSync(file, 'utf8')) as T;

/** Adds io.containerd.image.name next to the ref name of the layout's (single) manifest. */
export function annotateLayout(layout: string, name: string): void {
  const indexFile = join(layout, 'index.json');
  const index = readJson<OciIndex>(indexFile);
  if (index.manifests.length !== 1)
    throw new Error(`${layout}: expected one manifest, found ${index.manifests.length}`);
  const manifest = index.manifests[0]!;
  manifest.annotations = { ...manifest.annotations, [OCI_REF_NAME]: name, [CONTAINERD_NAME]: name };
  writeFileSync(indexFile, JSON.stringify(index));
}

/** Packs an OCI layout directory into a tar (entries sorted, owned by root, mtime 0). */
export function packLayout(layout: string, archive: string): void {
  const partial = `${archive}.partial`;
  capture('tar', [
    '-cf',
    partial,
    '--sort=name',
    '--owner=0',
    '--group=0',
    '--numeric-owner',
    '--mtime=@0',
    '-C',
    layout,
    'oci-layout',
    'index.json',
    'blobs',
  ]);
  renameSync(partial, archive);
  rmSync(layout, { recursive: true, force: true });
}

export interface LayerSize {
  digest: string;
  diffId: string;
  /** Bytes in the archive (gzip). */
  compressed: number;
  /** Bytes of the layer's tar once unpacked from gzip. */
  uncompressed: number;
}

export interface LayoutSummary {
  name: string;
  manifestDigest: string;
  config: OciConfig;
  layers: LayerSize[];
}

async function gunzippedSize(file: string): Promise<number> {
  let bytes = 0;
  const gunzip = createReadStream(file).pipe(createGunzip());
  for await (const chunk of gunzip) bytes += (chunk as Buffer).length;
  return bytes;
}

/** The image in an OCI layout directory: its name, config and per-layer sizes. */
export async function summarizeLayout(layout: string): Promise<LayoutSummary> {
  const index = readJson<OciIndex>(join(layout, 'index.json'));
  const desc = index.manifests[0];
  if (!desc) throw new Error(`${layout}: empty index`);
  const manifest = readJson<OciManifest>(blobPath(layout, desc.digest));
  const config = readJson<OciConfig>(blobPath(layout, manifest.config.digest));
  const layers: LayerSize[] = [];
  for (const [i, layer] of manifest.layers.entries()) {
    const file = blobPath(layout, layer.digest);
    const gzip = /gzip/.test(layer.mediaType);
    layers.push({
      digest: layer.digest,
      diffId: config.rootfs.diff_ids[i] ?? '',
      compressed: statSync(file).size,
      uncompressed: gzip ? await gunzippedSize(file) : statSync(file).size,
    });
  }
  return {
    name: desc.annotations?.[CONTAINERD_NAME] ?? desc.annotations?.[OCI_REF_NAME] ?? '',
    manifestDigest: desc.digest,
    config,
    layers,
  };
}
