// Finding the gateways: the URLs given with --gateway, or the Running gateway pods the user's
// kubeconfig can list (label selector, all namespaces unless -n), each reached through the API
// server's pod proxy `/api/v1/namespaces/{ns}/pods/{name}:{port}/proxy/...`.
import type { RequestOptions } from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';
import { CliError } from './errors.js';
import {
  createConnection,
  errorMessage,
  PROXY_AUTH_HEADER,
  send,
  type GatewayConnection,
} from './transport.js';

export const DEFAULT_SELECTOR = 'app.kubernetes.io/name=plugboard,app.kubernetes.io/component=gateway';
export const DEFAULT_GATEWAY_PORT = 9400;

export interface TargetOptions {
  /** Direct gateway URLs; when given, the Kubernetes API is not used. */
  gateways: string[];
  kubeconfig: string | null;
  context: string | null;
  /** Namespace of the gateway pods; null searches every namespace. */
  namespace: string | null;
  selector: string;
  /** Gateway port; null takes the pod's container port named `http` (else 9400). */
  port: number | null;
  /** Bearer token for mutations; null uses the kubeconfig user's token (proxy mode). */
  token: string | null;
  timeoutMs: number;
}

export function directConnections(o: TargetOptions): GatewayConnection[] {
  return o.gateways.map((raw) => {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new CliError('usage', `--gateway ${raw}: not a URL (e.g. http://127.0.0.1:9400)`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new CliError('usage', `--gateway ${raw}: must be an http:// or https:// URL`);
    const base = url.origin + url.pathname.replace(/\/+$/, '');
    return createConnection({
      label: base,
      node: null,
      baseUrl: base,
      credentialHeaders: () => Promise.resolve(o.token ? { authorization: `Bearer ${o.token}` } : null),
      timeoutMs: o.timeoutMs,
      via: base,
    });
  });
}

function loadKubeConfig(o: TargetOptions): KubeConfig {
  const kc = new KubeConfig();
  try {
    if (o.kubeconfig) kc.loadFromFile(o.kubeconfig);
    else kc.loadFromDefault();
    if (o.context) kc.setCurrentContext(o.context);
  } catch (err) {
    throw new CliError(
      'usage',
      `cannot load the kubeconfig${o.kubeconfig ? ` ${o.kubeconfig}` : ''}: ${(err as Error).message}`,
      { cause: err },
    );
  }
  if (o.context && !kc.getContextObject(o.context))
    throw new CliError('usage', `--context ${o.context}: no such context in the kubeconfig`);
  const cluster = kc.getCurrentCluster();
  if (!cluster)
    throw new CliError('usage', 'the kubeconfig has no current cluster; give --context or --gateway URL');
  // client-node refuses plain-HTTP servers unless TLS verification is "skipped"; an http:// server
  // (kubectl proxy, kubelet-sim) has no TLS to verify, so say so instead of failing every request.
  if (cluster.server.startsWith('http://') && !cluster.skipTLSVerify) {
    kc.loadFromOptions({
      clusters: kc.clusters.map((c) => (c.name === cluster.name ? { ...c, skipTLSVerify: true } : c)),
      users: kc.users,
      contexts: kc.contexts,
      currentContext: kc.currentContext,
    });
  }
  return kc;
}

interface PodList {
  items: {
    metadata: { name: string; namespace: string; deletionTimestamp?: string };
    spec?: { nodeName?: string; containers?: { ports?: { name?: string; containerPort: number }[] }[] };
    status?: { phase?: string };
  }[];
}

/** The gateways behind the API server: one connection per Running gateway pod, sorted by node. */
export async function proxiedConnections(o: TargetOptions): Promise<GatewayConnection[]> {
  const kc = loadKubeConfig(o);
  const server = kc.getCurrentCluster()!.server.replace(/\/+$/, '');
  const decorate = async (): Promise<RequestOptions> => {
    const opts: RequestOptions = {};
    try {
      await kc.applyToHTTPSOptions(opts);
    } catch (err) {
      throw new CliError(
        'unauthorized',
        `cannot get credentials from the kubeconfig: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
    return opts;
  };
  // The API server authenticates the proxy request with the user's Authorization header and does not
  // forward it to the pod; the gateway reads the same credential from X-Plugboard-Authorization and
  // verifies it itself (TokenReview + SubjectAccessReview).
  const credentialHeaders = async (): Promise<Record<string, string> | null> => {
    if (o.token) return { [PROXY_AUTH_HEADER]: `Bearer ${o.token}` };
    const headers = (await decorate()).headers as Record<string, string> | undefined;
    const authorization = headers?.Authorization ?? headers?.authorization;
    return authorization?.startsWith('Bearer ') ? { [PROXY_AUTH_HEADER]: authorization } : null;
  };

  const selector = encodeURIComponent(o.selector);
  const listPath = o.namespace
    ? `/api/v1/namespaces/${encodeURIComponent(o.namespace)}/pods?labelSelector=${selector}`
    : `/api/v1/pods?labelSelector=${selector}`;
  const res = await send(new URL(server + listPath), { timeoutMs: o.timeoutMs }, decorate);
  if (res.status !== 200) {
    throw CliError.fromStatus(
      res.status,
      `the API server ${server} refused to list the gateway pods${o.namespace ? ` in ${o.namespace}` : ''}: ${errorMessage(res)} (HTTP ${res.status})`,
    );
  }
  const pods = (JSON.parse(res.body) as PodList).items.filter(
    (p) => p.status?.phase === 'Running' && p.spec?.nodeName && !p.metadata.deletionTimestamp,
  );
  if (pods.length === 0) {
    throw new CliError(
      'not-found',
      `no Running gateway pods match ${o.selector}${o.namespace ? ` in namespace ${o.namespace}` : ' in any namespace'}` +
        ' (install the chart, or give -n/--selector, or --gateway URL)',
    );
  }
  return pods
    .sort((a, b) => a.spec!.nodeName!.localeCompare(b.spec!.nodeName!))
    .map((pod) => {
      const { namespace, name } = pod.metadata;
      const ports = pod.spec?.containers?.flatMap((c) => c.ports ?? []) ?? [];
      const port = o.port ?? ports.find((p) => p.name === 'http')?.containerPort ?? DEFAULT_GATEWAY_PORT;
      const proxy = `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}:${port}/proxy`;
      return createConnection({
        label: `${namespace}/${name}`,
        node: pod.spec!.nodeName!,
        baseUrl: server + proxy,
        decorate,
        credentialHeaders,
        timeoutMs: o.timeoutMs,
        via: `the API server (pod proxy to ${namespace}/${name})`,
      });
    });
}

export async function connect(o: TargetOptions): Promise<GatewayConnection[]> {
  return o.gateways.length > 0 ? directConnections(o) : proxiedConnections(o);
}
