// What `npm test` needs on the machine, got when missing — so that CI (.ci/run) and a newcomer take
// the same path: Debian's Chromium (browser tests), Prometheus and promtool (the alert rules' test),
// and, for the real-cluster suites (*.real.test.ts), root and Go ≥ 1.26 (the Kubernetes binaries are
// built from source by `plugboard-cluster build`, cached outside the repo). As root it installs the
// Debian packages with apt-get; otherwise it says exactly what to install and fails.
import { spawnSync } from 'node:child_process';

const has = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
const isRoot = process.getuid?.() === 0;

/** Installs the Debian packages behind missing commands; returns the problems it could not fix. */
export function ensureDebianPackages(needs) {
  const missing = [...new Set(needs.filter(([cmd]) => !has(cmd)).map(([, pkg]) => pkg))];
  if (missing.length === 0) return [];
  if (!isRoot) {
    return [
      `missing Debian packages: ${missing.join(' ')} — install them: sudo apt-get install ${missing.join(' ')}`,
    ];
  }
  console.error(`npm test: installing Debian packages the tests need: ${missing.join(' ')}`);
  const update = spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
  const install = spawnSync('apt-get', ['install', '-y', '-qq', ...missing], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  if (update.status !== 0 || install.status !== 0) {
    return [`apt-get install ${missing.join(' ')} failed (exit ${install.status ?? update.status})`];
  }
  return [];
}

/**
 * Go ≥ 1.26 on PATH (or $GO), which `why` needs; the problems, none when it is there. The
 * third-party suites need it too: their plugins and drivers are built from the Go module proxy
 * (packages/local-cluster's binaries.ts and third-party.ts).
 */
export function goProblems(why) {
  const go = spawnSync(process.env.GO || 'go', ['version'], { encoding: 'utf8' });
  const m = /go(\d+)\.(\d+)/.exec(go.stdout ?? '');
  if (go.status !== 0 || !m) {
    return [
      `Go is not installed: ${why} with Go ≥ 1.26 (https://go.dev/doc/install); put go on PATH or set GO`,
    ];
  }
  if (Number(m[1]) < 1 || (Number(m[1]) === 1 && Number(m[2]) < 26)) {
    return [`Go ${m[1]}.${m[2]} is too old: ${why} with Go ≥ 1.26 (https://go.dev/doc/install)`];
  }
  return [];
}

/** Problems that keep the real-cluster suites from running here (none: they can run). */
export function realClusterProblems() {
  const problems = [];
  if (!isRoot) {
    problems.push(
      'the real-cluster suites (*.real.test.ts) start real kubelets, which need root: run npm test as root (sudo -E npm test), or run other paths (npm test -- packages/plugin/src)',
    );
  }
  problems.push(...goProblems('the real-cluster suites build Kubernetes v1.37.2 from source'));
  for (const [cmd, pkg] of [
    ['unshare', 'util-linux'],
    ['nsenter', 'util-linux'],
  ]) {
    if (!has(cmd)) problems.push(`${cmd} is missing: install Debian's ${pkg}`);
  }
  return problems;
}
