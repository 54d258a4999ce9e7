// The API server calls of a DRA driver, and nothing else: read the Node (its UID owns the
// ResourceSlices), read ResourceClaims by namespace/name, and list/create/update/delete
// ResourceSlices of resource.k8s.io/v1 with the field selectors upstream's ResourceSlice controller
// uses. `kubeApiFromKubeConfig` implements it with @kubernetes/client-node's typed ResourceV1Api and
// CoreV1Api, loaded on first use: the client costs ~70 MB of RSS, which a process running only
// device plugins never pays. The rest of the driver speaks the wire JSON of api-types.ts; the
// conversion to the client's models (`_int` for `int`, Date for `timeAdded`) happens here only.
import type {
  CoreV1Api,
  KubeConfig,
  ResourceV1Api,
  ResourceV1ResourceClaim,
  V1AllocatedDeviceStatus,
  V1Device,
  V1DeviceAttribute,
  V1ObjectMeta,
  V1ResourceSlice,
} from '@kubernetes/client-node';
import { PluginError } from '../errors.js';
import {
  RESOURCE_API_VERSION,
  type AllocatedDeviceStatus,
  type Counter,
  type DeviceAttribute,
  type DeviceRequestAllocationResult,
  type DeviceTaintEffect,
  type NodeSelector,
  type ResourceClaim,
  type ResourceSlice,
  type SliceDevice,
} from './api-types.js';
import type { ObjectMeta } from '@plugboard/apimachinery';

/** What a DRA driver asks of the API server. Implement it yourself to use another client. */
export interface DraKubeApi {
  /** The Node's UID (the owner of the node's ResourceSlices). */
  readNodeUid(name: string): Promise<string>;
  /** null when the claim does not exist (404). */
  readResourceClaim(namespace: string, name: string): Promise<ResourceClaim | null>;
  /**
   * JSON merge patch of the claim's status subresource (the driver's `status.devices`, with the read
   * resourceVersion and UID as preconditions: a conflict rejects with 409).
   */
  patchResourceClaimStatus(namespace: string, name: string, patch: ResourceClaimStatusPatch): Promise<void>;
  /** `fieldSelector`, e.g. `spec.driver=gpu.example.com,spec.nodeName=node-a`. */
  listResourceSlices(fieldSelector: string): Promise<ResourceSlice[]>;
  createResourceSlice(slice: ResourceSlice): Promise<ResourceSlice>;
  /** PUT with the slice's resourceVersion: a conflict (409) rejects. */
  replaceResourceSlice(slice: ResourceSlice): Promise<ResourceSlice>;
  /** Delete with UID and resourceVersion preconditions; false when it was already gone (404). */
  deleteResourceSlice(
    name: string,
    preconditions: { uid: string; resourceVersion: string },
  ): Promise<boolean>;
}

/** The driver's write of a claim's status: its `status.devices` under preconditions. */
export interface ResourceClaimStatusPatch {
  metadata: { uid: string; resourceVersion: string };
  status: { devices: AllocatedDeviceStatus[] };
}

/** How to reach the API server: a kubeconfig file, the pod's service account, or a loaded config. */
export type KubeAccess = { kubeconfig: string } | { inCluster: true } | { kubeConfig: KubeConfig };

/** HTTP status of a failed API call (from the PluginError's cause), or null (no response). */
export function httpStatusOf(err: unknown): number | null {
  const cause = err instanceof PluginError ? err.cause : err;
  const code = (cause as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'number' ? code : null;
}

/** The Status message of an ApiException body, or the error's first line. */
function apiErrorText(err: unknown): string {
  const status = httpStatusOf(err);
  const body = (err as { body?: unknown }).body;
  let message: string | undefined;
  try {
    const parsed: unknown = typeof body === 'string' ? JSON.parse(body) : body;
    const m = (parsed as { message?: unknown } | null)?.message;
    if (typeof m === 'string') message = m;
  } catch {
    // Not a Status object.
  }
  message ??= err instanceof Error ? (err.message.split('\n')[0] ?? err.message) : String(err);
  return status === null ? message : `HTTP ${status}: ${message}`;
}

async function call<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw new PluginError('api-request-failed', `${what}: ${apiErrorText(err)}`, { cause: err });
  }
}

// --- wire JSON ↔ @kubernetes/client-node models --------------------------------------------------

function toTypedAttribute(a: DeviceAttribute): V1DeviceAttribute {
  if (a.int !== undefined) return { _int: Number(a.int) };
  if (a.bool !== undefined) return { bool: a.bool };
  if (a.version !== undefined) return { version: a.version };
  return { string: a.string ?? '' };
}

/** metav1.Time travels as a string on the wire and as a Date in client-node's models. */
function toTypedMeta(m: ObjectMeta): V1ObjectMeta {
  const { creationTimestamp, deletionTimestamp, ...rest } = m;
  return {
    ...rest,
    ...(creationTimestamp ? { creationTimestamp: new Date(creationTimestamp) } : {}),
    ...(deletionTimestamp ? { deletionTimestamp: new Date(deletionTimestamp) } : {}),
  };
}

function fromTypedAttribute(a: V1DeviceAttribute): DeviceAttribute {
  if (a._int !== undefined && a._int !== null) return { int: a._int };
  if (a.bool !== undefined && a.bool !== null) return { bool: a.bool };
  if (a.version !== undefined && a.version !== null) return { version: a.version };
  return { string: a.string ?? '' };
}

const wholeSeconds = (d: Date): string => d.toISOString().replace(/\.\d+Z$/, 'Z');

function toTypedDevice(d: SliceDevice): V1Device {
  return {
    name: d.name,
    ...(d.attributes
      ? {
          attributes: Object.fromEntries(
            Object.entries(d.attributes).map(([k, v]) => [k, toTypedAttribute(v)]),
          ),
        }
      : {}),
    ...(d.capacity
      ? {
          capacity: Object.fromEntries(
            Object.entries(d.capacity).map(([k, c]) => [
              k,
              {
                value: String(c.value),
                ...(c.requestPolicy
                  ? {
                      requestPolicy: {
                        ...(c.requestPolicy.default !== undefined
                          ? { _default: c.requestPolicy.default }
                          : {}),
                        ...(c.requestPolicy.validRange
                          ? { validRange: { ...c.requestPolicy.validRange } }
                          : {}),
                        ...(c.requestPolicy.validValues
                          ? { validValues: [...c.requestPolicy.validValues] }
                          : {}),
                      },
                    }
                  : {}),
              },
            ]),
          ),
        }
      : {}),
    ...(d.taints
      ? {
          taints: d.taints.map((t) => ({
            key: t.key,
            effect: t.effect,
            ...(t.value !== undefined ? { value: t.value } : {}),
            ...(t.timeAdded !== undefined ? { timeAdded: new Date(t.timeAdded) } : {}),
          })),
        }
      : {}),
    ...(d.allowMultipleAllocations !== undefined
      ? { allowMultipleAllocations: d.allowMultipleAllocations }
      : {}),
    ...(d.consumesCounters
      ? {
          consumesCounters: d.consumesCounters.map((c) => ({
            counterSet: c.counterSet,
            counters: typedCounters(c.counters),
          })),
        }
      : {}),
  };
}

/** Counters as client-node types them (a value string each). */
function typedCounters(counters: Record<string, Counter> | undefined): Record<string, { value: string }> {
  return Object.fromEntries(Object.entries(counters ?? {}).map(([k, c]) => [k, { value: String(c.value) }]));
}

function fromTypedDevice(d: V1Device): SliceDevice {
  const out: SliceDevice = { name: d.name };
  if (d.attributes && Object.keys(d.attributes).length > 0) {
    out.attributes = Object.fromEntries(
      Object.entries(d.attributes).map(([k, v]) => [k, fromTypedAttribute(v)]),
    );
  }
  if (d.capacity && Object.keys(d.capacity).length > 0) {
    out.capacity = Object.fromEntries(
      Object.entries(d.capacity).map(([k, v]) => {
        const policy = v.requestPolicy;
        const range = policy?.validRange;
        return [
          k,
          {
            value: String(v.value),
            ...(policy
              ? {
                  requestPolicy: {
                    ...(policy._default ? { default: policy._default } : {}),
                    ...(policy.validValues?.length ? { validValues: [...policy.validValues] } : {}),
                    ...(range
                      ? {
                          validRange: {
                            min: range.min,
                            ...(range.max ? { max: range.max } : {}),
                            ...(range.step ? { step: range.step } : {}),
                          },
                        }
                      : {}),
                  },
                }
              : {}),
          },
        ];
      }),
    );
  }
  if (d.taints && d.taints.length > 0) {
    out.taints = d.taints.map((t) => ({
      key: t.key,
      effect: t.effect as DeviceTaintEffect,
      ...(t.value ? { value: t.value } : {}),
      ...(t.timeAdded ? { timeAdded: wholeSeconds(new Date(t.timeAdded)) } : {}),
    }));
  }
  if (d.allowMultipleAllocations !== undefined && d.allowMultipleAllocations !== null) {
    out.allowMultipleAllocations = d.allowMultipleAllocations;
  }
  if (d.consumesCounters && d.consumesCounters.length > 0) {
    out.consumesCounters = d.consumesCounters.map((c) => ({
      counterSet: c.counterSet,
      counters: typedCounters(c.counters),
    }));
  }
  return out;
}

function toTypedSlice(s: ResourceSlice): V1ResourceSlice {
  return {
    apiVersion: RESOURCE_API_VERSION,
    kind: 'ResourceSlice',
    metadata: toTypedMeta(s.metadata),
    spec: {
      driver: s.spec.driver,
      pool: { ...s.spec.pool },
      ...(s.spec.nodeName !== undefined ? { nodeName: s.spec.nodeName } : {}),
      ...(s.spec.devices ? { devices: s.spec.devices.map(toTypedDevice) } : {}),
      ...(s.spec.sharedCounters
        ? {
            sharedCounters: s.spec.sharedCounters.map((c) => ({
              name: c.name,
              counters: typedCounters(c.counters),
            })),
          }
        : {}),
    },
  };
}

function fromTypedSlice(s: V1ResourceSlice): ResourceSlice {
  const m = s.metadata ?? {};
  return {
    apiVersion: RESOURCE_API_VERSION,
    kind: 'ResourceSlice',
    metadata: {
      ...(m.name ? { name: m.name } : {}),
      ...(m.uid ? { uid: m.uid } : {}),
      ...(m.resourceVersion ? { resourceVersion: m.resourceVersion } : {}),
      ...(m.ownerReferences?.length
        ? {
            ownerReferences: m.ownerReferences.map((o) => ({
              apiVersion: o.apiVersion,
              kind: o.kind,
              name: o.name,
              uid: o.uid,
              ...(o.controller !== undefined ? { controller: o.controller } : {}),
            })),
          }
        : {}),
    },
    spec: {
      driver: s.spec.driver,
      pool: {
        name: s.spec.pool.name,
        generation: Number(s.spec.pool.generation),
        resourceSliceCount: Number(s.spec.pool.resourceSliceCount),
      },
      ...(s.spec.nodeName ? { nodeName: s.spec.nodeName } : {}),
      ...(s.spec.devices?.length ? { devices: s.spec.devices.map(fromTypedDevice) } : {}),
      ...(s.spec.sharedCounters?.length
        ? {
            sharedCounters: s.spec.sharedCounters.map((c) => ({
              name: c.name,
              counters: typedCounters(c.counters),
            })),
          }
        : {}),
    },
  };
}

function fromTypedClaim(c: ResourceV1ResourceClaim): ResourceClaim {
  const allocation = c.status?.allocation;
  const results: DeviceRequestAllocationResult[] | undefined = allocation?.devices?.results?.map((r) => ({
    request: r.request,
    driver: r.driver,
    pool: r.pool,
    device: r.device,
    ...(r.adminAccess ? { adminAccess: true } : {}),
    ...(r.tolerations?.length
      ? {
          tolerations: r.tolerations.map((t) => ({
            ...(t.key ? { key: t.key } : {}),
            ...(t.operator ? { operator: t.operator as 'Exists' | 'Equal' } : {}),
            ...(t.value ? { value: t.value } : {}),
            ...(t.effect ? { effect: t.effect as DeviceTaintEffect } : {}),
          })),
        }
      : {}),
    ...(r.shareID ? { shareID: r.shareID } : {}),
  }));
  const devices = c.status?.devices?.map(fromTypedDeviceStatus);
  return {
    metadata: {
      name: c.metadata?.name ?? '',
      namespace: c.metadata?.namespace ?? '',
      uid: c.metadata?.uid ?? '',
      ...(c.metadata?.resourceVersion ? { resourceVersion: c.metadata.resourceVersion } : {}),
    },
    ...(allocation
      ? {
          status: {
            allocation: {
              devices: results ? { results } : {},
              // client-node types the operator as a string; the API server sends core/v1's values.
              ...(allocation.nodeSelector ? { nodeSelector: allocation.nodeSelector as NodeSelector } : {}),
            },
            ...(devices?.length ? { devices } : {}),
          },
        }
      : {}),
  };
}

/** A `status.devices` entry in wire form (conditions' times as whole-second strings). */
function fromTypedDeviceStatus(d: V1AllocatedDeviceStatus): AllocatedDeviceStatus {
  return {
    driver: d.driver,
    pool: d.pool,
    device: d.device,
    ...(d.shareID ? { shareID: d.shareID } : {}),
    ...(d.conditions
      ? {
          conditions: d.conditions.map((x) => ({
            type: x.type,
            status: x.status as 'True' | 'False' | 'Unknown',
            ...(x.observedGeneration !== undefined ? { observedGeneration: x.observedGeneration } : {}),
            lastTransitionTime: wholeSeconds(new Date(x.lastTransitionTime)),
            reason: x.reason,
            message: x.message,
          })),
        }
      : {}),
    ...(d.data !== undefined && d.data !== null ? { data: d.data as Record<string, unknown> } : {}),
    ...(d.networkData ? { networkData: { ...d.networkData } } : {}),
  };
}

/** A DraKubeApi on @kubernetes/client-node 1.4 (ResourceV1Api, CoreV1Api). */
export async function kubeApiFromKubeConfig(access: KubeAccess): Promise<DraKubeApi> {
  const k8s = await import('./kube-client.js');
  let kc: KubeConfig;
  if ('kubeConfig' in access) kc = access.kubeConfig;
  else {
    kc = new k8s.KubeConfig();
    try {
      if ('kubeconfig' in access) kc.loadFromFile(access.kubeconfig);
      else kc.loadFromCluster();
    } catch (err) {
      const where = 'kubeconfig' in access ? access.kubeconfig : 'the in-cluster service account';
      throw new PluginError(
        'config-invalid',
        `cannot load Kubernetes API access from ${where}: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
  }
  if (!kc.getCurrentCluster()) {
    throw new PluginError('config-invalid', 'the Kubernetes API access has no current cluster');
  }
  allowPlainHttpClusters(kc);
  await reuseConnections(kc);
  const resource: ResourceV1Api = kc.makeApiClient(k8s.ResourceV1Api);
  const core: CoreV1Api = kc.makeApiClient(k8s.CoreV1Api);
  return {
    async readNodeUid(name) {
      const node = await call(`read Node ${name}`, () => core.readNode({ name }));
      const uid = node.metadata?.uid;
      if (!uid) throw new PluginError('api-request-failed', `read Node ${name}: the Node has no UID`);
      return uid;
    },
    async readResourceClaim(namespace, name) {
      try {
        return fromTypedClaim(await resource.readNamespacedResourceClaim({ namespace, name }));
      } catch (err) {
        if (httpStatusOf(err) === 404) return null;
        throw new PluginError(
          'api-request-failed',
          `read ResourceClaim ${namespace}/${name}: ${apiErrorText(err)}`,
          {
            cause: err,
          },
        );
      }
    },
    async patchResourceClaimStatus(namespace, name, patch) {
      await call(`patch ResourceClaim ${namespace}/${name} status`, () =>
        resource.patchNamespacedResourceClaimStatus(
          { namespace, name, body: patch },
          k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
        ),
      );
    },
    async listResourceSlices(fieldSelector) {
      const list = await call(`list ResourceSlices (${fieldSelector})`, () =>
        resource.listResourceSlice({ fieldSelector }),
      );
      return list.items.map(fromTypedSlice);
    },
    async createResourceSlice(slice) {
      return fromTypedSlice(
        await call('create ResourceSlice', () => resource.createResourceSlice({ body: toTypedSlice(slice) })),
      );
    },
    async replaceResourceSlice(slice) {
      const name = slice.metadata.name ?? '';
      return fromTypedSlice(
        await call(`update ResourceSlice ${name}`, () =>
          resource.replaceResourceSlice({ name, body: toTypedSlice(slice) }),
        ),
      );
    },
    async deleteResourceSlice(name, preconditions) {
      try {
        await resource.deleteResourceSlice({ name, body: { preconditions } });
        return true;
      } catch (err) {
        if (httpStatusOf(err) === 404) return false;
        throw new PluginError('api-request-failed', `delete ResourceSlice ${name}: ${apiErrorText(err)}`, {
          cause: err,
        });
      }
    },
  };
}

/**
 * client-node 1.4 builds a new http(s).Agent for every request (KubeConfig's
 * applySecurityAuthentication), so no connection is ever reused: each claim read of a prepare paid a
 * TCP connect (and, against a real API server, a TLS handshake). client-go keeps its connections.
 * Here the requests share one keep-alive agent for as long as the TLS options client-node computes
 * stay the same (a rotated client certificate gets a new agent); proxy agents are left as they are.
 * An idle kept-alive socket is unref'd by Node's agent: it keeps no process alive. Like
 * allowPlainHttpClusters it changes the KubeConfig it is given (a caller's other clients made from
 * it share the agent too).
 */
export async function reuseConnections(kc: KubeConfig): Promise<void> {
  const [http, https] = await Promise.all([import('node:http'), import('node:https')]);
  const authenticate = kc.applySecurityAuthentication.bind(kc);
  let shared: { key: string; agent: import('node:http').Agent } | null = null;
  kc.applySecurityAuthentication = async (context) => {
    await authenticate(context);
    const fresh = context.getAgent();
    const Kind =
      fresh?.constructor === https.Agent
        ? https.Agent
        : fresh?.constructor === http.Agent
          ? http.Agent
          : null;
    if (!fresh || !Kind) return;
    const options = (fresh as import('node:https').Agent).options;
    const key = JSON.stringify([
      Kind.name,
      options.ca,
      options.cert,
      options.key,
      options.pfx,
      options.passphrase,
      options.rejectUnauthorized,
      options.servername,
    ]);
    if (shared?.key !== key) {
      shared?.agent.destroy();
      shared = { key, agent: new Kind({ ...options, keepAlive: true }) };
    }
    context.setAgent(shared.agent);
  };
}

/**
 * client-node refuses plain-HTTP servers unless TLS verification is "skipped"; an http:// URL has no
 * TLS to verify (kubelet-sim, kubectl proxy), so say so instead of failing every call. The one place
 * for it: the DRA driver's API access and the gateway's kubeconfig both call it.
 */
export function allowPlainHttpClusters(kc: KubeConfig): void {
  if (!kc.clusters.some((c) => c.server.startsWith('http://') && !c.skipTLSVerify)) return;
  kc.loadFromOptions({
    clusters: kc.clusters.map((c) => ({
      ...c,
      skipTLSVerify: c.skipTLSVerify || c.server.startsWith('http://'),
    })),
    users: kc.users,
    contexts: kc.contexts,
    currentContext: kc.currentContext,
  });
}
