// The node gateway's config document for a test node: plain data in the shape of the gateway's YAML
// config (the plugin config's `resources` and `dra` lists plus the `gateway:` section), pointing the
// gateway at the node's sockets, directories and kubeconfig. gatewayProcess writes it to a file for
// the `plugboard-gateway` binary; an app's own tests may hand it to the gateway's parseGatewayConfig.
import type { TestNode } from './test-node.js';

/** A plain JSON/YAML object (the gateway validates it; the test bed only assembles it). */
export type DocumentSection = { [key: string]: unknown };

export interface GatewayDocument {
  /** Device plugins (`@plugboard/plugin`'s `resources` entries). */
  resources: unknown[];
  /** DRA drivers (`@plugboard/plugin`'s `dra` entries); left out when empty. */
  dra?: unknown[];
  gateway: DocumentSection;
}

export interface GatewayDocumentOptions {
  resources?: readonly unknown[];
  dra?: readonly unknown[];
  /** Fault and scenario endpoints (default on: a test bed's gateway is there to be faulted). */
  faults?: boolean;
  /** Where active faults persist; default none (in memory). */
  stateDir?: string | null;
  /** Static bearer token file for mutations (gatewayProcess's `token` writes one for you). */
  tokenFile?: string;
  /** The kubeconfig the gateway uses; default the node's. */
  kubeconfig?: string;
  /** Anything else of the `gateway:` section, merged in last (objects deeply, the rest replaced). */
  gateway?: DocumentSection;
}

const isSection = (v: unknown): v is DocumentSection =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** `over` merged into `base`: nested objects merged key by key, arrays and scalars replaced. */
export function mergeSection(base: DocumentSection, over: DocumentSection): DocumentSection {
  const out: DocumentSection = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const prev = out[key];
    out[key] = isSection(prev) && isSection(value) ? mergeSection(prev, value) : value;
  }
  return out;
}

export function gatewayDocument(node: TestNode, options: GatewayDocumentOptions = {}): GatewayDocument {
  const dra = options.dra ?? [];
  const gateway: DocumentSection = {
    nodeName: node.name,
    listen: '127.0.0.1:0',
    devicePluginDir: node.devicePluginDir,
    pluginsDir: node.pluginsDir,
    pluginsRegistryDir: node.pluginsRegistryDir,
    cdiDir: node.cdiDir,
    stateDir: options.stateDir ?? null,
    podResources: { socket: node.podResourcesSocket },
    kube: { mode: 'kubeconfig', kubeconfig: options.kubeconfig ?? node.kubeconfig },
    topology: { sysfsRoot: node.sysfsRoot },
    faults: { enabled: options.faults ?? true },
    ...(options.tokenFile ? { auth: { tokenFile: options.tokenFile } } : {}),
  };
  return {
    resources: [...(options.resources ?? [])],
    ...(dra.length > 0 ? { dra: [...dra] } : {}),
    gateway: options.gateway ? mergeSection(gateway, options.gateway) : gateway,
  };
}
