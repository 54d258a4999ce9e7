// The objects a fresh control plane creates before any node joins, as kube-apiserver's bootstrap
// controllers do: the system namespaces (pkg/controlplane/controller/systemnamespaces: default,
// kube-system, kube-public, kube-node-lease) and the `default/kubernetes` Service
// (pkg/controlplane/controller/kubernetesservice) that `kubectl cluster-info` and in-cluster
// clients find the API server by. A namespace a pod names is created on first use (a real cluster
// needs `kubectl create namespace` first; the slice has no namespace writes).

import { randomUUID } from 'node:crypto';
import { kubeTime } from '../util/kube-time.js';
import type { KubeObject, ObjectStore } from './object-store.js';

export const SYSTEM_NAMESPACES = ['default', 'kube-node-lease', 'kube-public', 'kube-system'] as const;

export function namespaceObject(name: string, created = new Date()): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name,
      uid: randomUUID(),
      creationTimestamp: kubeTime(created),
      labels: { 'kubernetes.io/metadata.name': name },
    },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  };
}

/** Creates `name` unless it exists. */
export function ensureNamespace(store: ObjectStore, name: string): void {
  if (!store.get(undefined, name)) store.upsert(namespaceObject(name));
}

/**
 * `default/kubernetes`: ClusterIP 10.96.0.1 (the first address of the default service CIDR) on
 * port 443 → the API server's port. The slice serves plain HTTP on `apiPort`; the Service says
 * what a real cluster says, its EndpointSlice (not served) would name the real address.
 */
export function kubernetesService(apiPort: number, created = new Date()): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: 'kubernetes',
      namespace: 'default',
      uid: randomUUID(),
      creationTimestamp: kubeTime(created),
      labels: { component: 'apiserver', provider: 'kubernetes' },
    },
    spec: {
      ports: [{ name: 'https', protocol: 'TCP', port: 443, targetPort: apiPort }],
      clusterIP: '10.96.0.1',
      clusterIPs: ['10.96.0.1'],
      type: 'ClusterIP',
      sessionAffinity: 'None',
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
      internalTrafficPolicy: 'Cluster',
    },
    status: { loadBalancer: {} },
  };
}
