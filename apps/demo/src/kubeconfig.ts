// One kubeconfig for the whole demo: each simulated node has its own API slice (a kubelet-sim
// plays the node and its control plane), so the file holds one cluster, user and context per
// node, named after the node, the first one current — `kubectl --context node-b get pods`.
import { readFileSync, writeFileSync } from 'node:fs';
import { DemoError } from './errors.js';

interface NamedEntry {
  name: string;
  [key: string]: unknown;
}

interface KubeconfigFile {
  clusters: NamedEntry[];
  users: NamedEntry[];
  contexts: NamedEntry[];
}

export function writeDemoKubeconfig(path: string, nodes: { name: string; kubeconfigPath: string }[]): void {
  const merged = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [] as NamedEntry[],
    users: [] as NamedEntry[],
    contexts: [] as NamedEntry[],
    'current-context': nodes[0]?.name ?? '',
    preferences: {},
  };
  for (const node of nodes) {
    let own: KubeconfigFile;
    try {
      // kubelet-sim writes its kubeconfig as JSON (valid YAML).
      own = JSON.parse(readFileSync(node.kubeconfigPath, 'utf8')) as KubeconfigFile;
    } catch (err) {
      throw new DemoError('start', `cannot read ${node.kubeconfigPath}: ${String(err)}`, { cause: err });
    }
    const cluster = own.clusters[0];
    const user = own.users[0];
    const context = own.contexts[0];
    if (!cluster || !user || !context)
      throw new DemoError('start', `${node.kubeconfigPath}: expected a cluster, a user and a context`);
    merged.clusters.push({ ...cluster, name: node.name });
    merged.users.push({ ...user, name: node.name });
    merged.contexts.push({
      name: node.name,
      context: { ...(context['context'] as object), cluster: node.name, user: node.name },
    });
  }
  writeFileSync(path, `${JSON.stringify(merged, null, 2)}\n`, { mode: 0o600 });
}
