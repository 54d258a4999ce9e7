#!/usr/bin/env node
// Builds every workspace in dependency order. `--no-web` skips the Next.js build.
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(import.meta.url), '../..');
const order = [
  '@plugboard/apimachinery',
  '@plugboard/k8s-api',
  '@plugboard/proto',
  '@plugboard/grpc-authority',
  '@plugboard/api',
  '@plugboard/topology',
  '@plugboard/local-cluster',
  '@plugboard/plugin',
  '@plugboard/kubelet-sim',
  '@plugboard/node-gateway',
  '@plugboard/kubectl-plugboard',
];
if (!process.argv.includes('--no-web')) order.push('@plugboard/web');
for (const ws of order) {
  const res = spawnSync('npm', ['run', 'build', '--if-present', '-w', ws], { stdio: 'inherit', cwd: root });
  if (res.status !== 0) {
    console.error(`build failed in ${ws}`);
    process.exit(res.status ?? 1);
  }
}
