// The Kubernetes client, when the API is used at all: @kubernetes/client-node costs ~70 MB of RSS
// once loaded, so kube.ts (and with it the client) is imported only when gateway.kube.mode is not
// disabled.
import type { KubeConfig } from '@kubernetes/client-node';
import type { GatewayConfig } from '../config.js';
import type * as KubeModule from './kube.js';

export interface KubeClient {
  mode: 'in-cluster' | 'kubeconfig';
  kc: KubeConfig;
  module: typeof KubeModule;
}

/** null when the Kubernetes API is disabled; `kubeConfig` replaces the one `config.kube` names. */
export async function loadKubeClient(
  config: GatewayConfig,
  kubeConfig?: KubeConfig,
): Promise<KubeClient | null> {
  const mode = config.kube.mode;
  if (mode === 'disabled') return null;
  const module = await import('./kube.js');
  return { mode, kc: kubeConfig ?? module.loadKubeConfig(mode, config.kube.kubeconfig), module };
}
