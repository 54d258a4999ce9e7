// Next.js build configuration. The dashboard runs behind its own Node server (server.ts), which
// owns the /api proxy and the WebSocket upgrades; Next only renders pages.
import type { NextConfig } from 'next';

export const nextConfig: NextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  // Server-only libraries must never reach a browser bundle; keeping them external on the server
  // also avoids bundling their native/optional dependencies.
  serverExternalPackages: ['@kubernetes/client-node', 'ws', 'pino'],
  // The wire contract (@plugboard/api) and the backoff (@plugboard/apimachinery) are workspace
  // packages of TypeScript source: compile them with the app, from their source (their
  // package.json's `@plugboard/source` export).
  transpilePackages: ['@plugboard/api', '@plugboard/apimachinery'],
  turbopack: {
    resolveAlias: {
      '@plugboard/api': '../../packages/api/src/index.ts',
      '@plugboard/apimachinery': '../../packages/apimachinery/src/index.ts',
    },
  },
  // The build type-checks only what it ships; tests, e2e and bench (which load sibling packages'
  // sources) are checked by `tsc -p apps/web/tsconfig.json`.
  typescript: { tsconfigPath: 'tsconfig.next.json' },
};

// Next reads its config from the default export; this is one of Next's own files.
export default nextConfig;
