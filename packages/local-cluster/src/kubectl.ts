// The real kubectl (built with the cluster's binaries) run against a kubeconfig: what the test bed's
// clusters, the demo's real cluster and anything else driving a local cluster the way an operator
// does share. A failure carries kubectl's own stderr.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { LocalClusterError } from './errors.js';

const run = promisify(execFile);

export interface KubectlResult {
  stdout: string;
  stderr: string;
}

/** `bin --kubeconfig kubeconfig args…` with `input` on stdin; rejects with kubectl's stderr. */
export async function runKubectl(
  bin: string,
  kubeconfig: string,
  args: readonly string[],
  opts: { input?: string } = {},
): Promise<KubectlResult> {
  const child = run(bin, ['--kubeconfig', kubeconfig, ...args], { maxBuffer: 64 * 1024 * 1024 });
  child.child.stdin?.end(opts.input ?? '');
  try {
    return await child;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new LocalClusterError('kubectl', `kubectl ${args.join(' ')}: ${e.stderr?.trim() || e.message}`, {
      cause: err,
    });
  }
}
