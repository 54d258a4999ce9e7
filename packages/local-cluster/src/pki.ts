// The cluster's certificates and kubeconfigs. The certificates come from go/cmd/pki, which runs
// kubeadm's own PKI helpers; file names follow kubeadm's layout (ca.crt, apiserver.crt, sa.key, …).
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { LocalClusterError } from './errors.js';

const run = promisify(execFile);

export interface ClientIdentity {
  /** File name without .crt/.key. */
  file: string;
  /** The user (CN). */
  user: string;
  /** The groups (O). */
  groups?: readonly string[];
}

async function pki(bin: string, args: string[]): Promise<void> {
  try {
    await run(bin, args);
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new LocalClusterError('internal', `pki ${args[0]}: ${e.stderr?.trim() || e.message}`, {
      cause: err,
    });
  }
}

/** The cluster CA, the API server's serving and kubelet-client certificates, the SA key pair. */
export function writeClusterPki(pkiBin: string, dir: string, sans: readonly string[]): Promise<void> {
  return pki(pkiBin, ['init', '--dir', dir, '--san', sans.join(',')]);
}

/** A client certificate signed by the cluster CA. */
export function writeClientCert(pkiBin: string, dir: string, id: ClientIdentity): Promise<void> {
  return pki(pkiBin, [
    'client',
    '--dir',
    dir,
    '--name',
    id.file,
    '--cn',
    id.user,
    ...(id.groups?.length ? ['--org', id.groups.join(',')] : []),
  ]);
}

/**
 * A kubeconfig for the cluster: authenticating with a client certificate of pkiDir (`client`), or
 * with a bearer token alone (`token`, e.g. a ServiceAccount's from the TokenRequest API: no client
 * certificate, which the API server would authenticate first).
 */
export function writeKubeconfig(
  path: string,
  opts: { server: string; pkiDir: string; name: string } & (
    { client: string } | { token: string; user: string }
  ),
): void {
  const [userName, user] =
    'client' in opts
      ? [
          opts.client,
          {
            'client-certificate': join(opts.pkiDir, `${opts.client}.crt`),
            'client-key': join(opts.pkiDir, `${opts.client}.key`),
          },
        ]
      : [opts.user, { token: opts.token }];
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: opts.name,
        cluster: { server: opts.server, 'certificate-authority': join(opts.pkiDir, 'ca.crt') },
      },
    ],
    users: [{ name: userName, user }],
    contexts: [{ name: opts.name, context: { cluster: opts.name, user: userName } }],
    'current-context': opts.name,
  };
  writeFileSync(path, stringify(config), { mode: 0o600 });
}
