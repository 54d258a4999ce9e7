// The kubelet's device manager (pkg/kubelet/cm/devicemanager): the Registration server on
// `<dir>/kubelet.sock`, one client per registered plugin (GetDevicePluginOptions, ListAndWatch),
// the per-resource healthy/unhealthy device sets behind node capacity and allocatable, the
// stop grace period, device allocation for containers (GetPreferredAllocation, Allocate,
// PreStartContainer) and the checkpoint that lets allocations survive a restart.

import { EventEmitter } from 'node:events';
import { lstatSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { basename, isAbsolute, join } from 'node:path';
import {
  Server,
  credentials,
  Metadata,
  type ClientReadableStream,
  type sendUnaryData,
  type ServerUnaryCall,
  type ServiceError,
} from '@grpc/grpc-js';
import type { Logger } from 'pino';
import {
  bindUnixServer,
  closeUnixServer,
  deviceplugin,
  DEVICE_PLUGIN_API_VERSION,
  HEALTHY,
  KUBELET_SOCKET_NAME,
  type DeviceHealth,
} from '@plugboard/proto';
import {
  readCheckpoint,
  writeCheckpoint,
  CHECKPOINT_FILE,
  type CheckpointData,
} from './checkpoint/checkpoint.js';
import { KubeletSimError } from '../../errors.js';
import { goGrpcErrorText, unknownStatus } from '../../util/grpc-errors.js';
import { isExtendedResourceName } from '../../util/resource-names.js';
import { generateHints, isSet, type Mask, type TopologyHint } from '../topologymanager/topology-manager.js';

/** The kubelet's endpointStopGracePeriod. */
export const DEFAULT_GRACE_PERIOD_MS = 5 * 60 * 1000;
/** The kubelet dials a registering plugin with a 10 s timeout. */
const DEFAULT_DIAL_TIMEOUT_MS = 10_000;
/** KubeletPreStartContainerRPCTimeoutInSecs; the sim applies it to every plugin RPC. */
const DEFAULT_RPC_TIMEOUT_MS = 30_000;
/** Device IDs without NUMA affinity are grouped under this fake node, as in the kubelet. */
export const NODE_WITHOUT_TOPOLOGY = -1;

export interface PluginOptions {
  preStartRequired: boolean;
  getPreferredAllocationAvailable: boolean;
}

/** How the plugin registered: Register on kubelet.sock, or the plugin watcher (plugins_registry). */
export type RegisteredVia = 'kubelet.sock' | 'plugin-watcher';

export interface DeviceView {
  id: string;
  health: DeviceHealth;
  /** NUMA node IDs from Device.topology; empty means no NUMA preference. */
  numaNodes: number[];
}

export interface ResourceView {
  name: string;
  /** All devices (healthy + unhealthy); 0 after the grace period of a gone plugin. */
  capacity: number;
  /** Healthy devices only. */
  allocatable: number;
  /** True while a plugin is connected and its ListAndWatch stream is open. */
  registered: boolean;
  /** The plugin's socket path (absolute), null when restored from the checkpoint only. */
  endpoint: string | null;
  /** Options from the plugin's GetDevicePluginOptions answer (not from RegisterRequest). */
  options: PluginOptions | null;
  registeredAt: string | null;
  registeredVia: RegisteredVia | null;
  /** When the plugin's stream ended (or the kubelet restarted); null while connected. */
  disconnectedAt: string | null;
  /** When capacity drops to zero unless the plugin registers again. */
  graceExpiresAt: string | null;
  /** True once the grace period expired: the node reports capacity 0 for it. */
  removed: boolean;
  devices: DeviceView[];
  /** Device IDs allocated to containers. */
  allocated: string[];
}

/** What Allocate returned for one container and resource, kept like the kubelet's podDevices. */
export interface ContainerAllocation {
  resource: string;
  deviceIds: string[];
  /** Device IDs per NUMA node (NODE_WITHOUT_TOPOLOGY for none). */
  byNuma: Map<number, string[]>;
  response: deviceplugin.ContainerAllocateResponse;
  /** The plugin's GetPreferredAllocation answer that shaped the pick; null when it was not asked. */
  preferred: string[] | null;
}

interface Endpoint {
  resource: string;
  socketPath: string | null;
  client: deviceplugin.DevicePluginClient | null;
  stream: ClientReadableStream<deviceplugin.ListAndWatchResponse> | null;
  options: PluginOptions | null;
  registeredAt: Date | null;
  registeredVia: RegisteredVia | null;
  stoppedAt: Date | null;
  graceTimer: NodeJS.Timeout | null;
  /** Set when the sim itself closes the client, so the stream's end is not a disconnect. */
  closed: boolean;
}

export interface DeviceManagerOptions {
  devicePluginDir: string;
  gracePeriodMs?: number;
  dialTimeoutMs?: number;
  rpcTimeoutMs?: number;
  logger: Logger;
}

export interface DeviceManagerEvents {
  registered: [{ resource: string; endpoint: string; options: PluginOptions }];
  'registration-rejected': [{ resource: string; endpoint: string; error: string }];
  devices: [{ resource: string; devices: DeviceView[] }];
  disconnected: [{ resource: string }];
  'resource-removed': [{ resource: string }];
  /** Anything that changes node capacity/allocatable or device health. */
  changed: [];
}

type PodDevices = Map<string, Map<string, Map<string, ContainerAllocation>>>;

export class DeviceManager extends EventEmitter<DeviceManagerEvents> {
  readonly devicePluginDir: string;
  readonly socketPath: string;
  private readonly gracePeriodMs: number;
  private readonly dialTimeoutMs: number;
  private readonly rpcTimeoutMs: number;
  private readonly log: Logger;
  private server: Server | null = null;

  private endpoints = new Map<string, Endpoint>();
  /** Latest ListAndWatch answer per resource, in the plugin's order. */
  private allDevices = new Map<string, Map<string, DeviceView>>();
  private healthy = new Map<string, Set<string>>();
  private unhealthy = new Map<string, Set<string>>();
  /** Resources whose grace period expired; the node reports them as 0. */
  private removed = new Set<string>();
  private podDevices: PodDevices = new Map();

  constructor(opts: DeviceManagerOptions) {
    super();
    this.devicePluginDir = opts.devicePluginDir;
    this.socketPath = join(opts.devicePluginDir, KUBELET_SOCKET_NAME);
    this.gracePeriodMs = opts.gracePeriodMs ?? DEFAULT_GRACE_PERIOD_MS;
    this.dialTimeoutMs = opts.dialTimeoutMs ?? DEFAULT_DIAL_TIMEOUT_MS;
    this.rpcTimeoutMs = opts.rpcTimeoutMs ?? DEFAULT_RPC_TIMEOUT_MS;
    this.log = opts.logger.child({ component: 'device-manager' });
  }

  /** Reads the checkpoint, deletes every socket in the directory, serves Registration. */
  async start(): Promise<void> {
    mkdirSync(this.devicePluginDir, { recursive: true, mode: 0o750 });
    this.restoreCheckpoint();
    this.cleanupPluginDirectory();
    const server = new Server();
    server.addService(deviceplugin.RegistrationService, {
      register: this.register.bind(this),
    } satisfies deviceplugin.RegistrationServer);
    await bindUnixServer(server, this.socketPath);
    this.server = server;
    this.log.info({ socket: this.socketPath }, 'device plugin registration server listening');
  }

  /** Stops serving and disconnects every plugin; the checkpoint stays on disk. */
  async stop(): Promise<void> {
    for (const ep of this.endpoints.values()) {
      this.closeEndpoint(ep);
      if (ep.graceTimer) clearTimeout(ep.graceTimer);
      ep.graceTimer = null;
    }
    const server = this.server;
    this.server = null;
    // Cancels in-flight calls such as a Register still dialling its plugin.
    if (server) await closeUnixServer(server, this.socketPath);
    else rmSync(this.socketPath, { force: true });
    this.persist();
  }

  /**
   * A kubelet restart as the device manager sees it: registrations and device lists live only in
   * memory and are lost; allocations come back from the checkpoint; every socket is deleted.
   */
  async restart(): Promise<void> {
    await this.stop();
    this.endpoints = new Map();
    this.allDevices = new Map();
    this.healthy = new Map();
    this.unhealthy = new Map();
    // `removed` survives: the Node object (kept by the API server) still reports those at 0.
    this.podDevices = new Map();
    await this.start();
    this.emit('changed');
  }

  // --- Registration -------------------------------------------------------------------------

  private register(
    call: ServerUnaryCall<deviceplugin.RegisterRequest, deviceplugin.Empty>,
    callback: sendUnaryData<deviceplugin.Empty>,
  ): void {
    const req = call.request;
    const log = this.log.child({ resource: req.resourceName, rpc: 'Register' });
    log.info({ endpoint: req.endpoint, version: req.version }, 'got registration request from device plugin');
    this.validateAndConnect(req).then(
      () => callback(null, {}),
      (err: unknown) => {
        const message = err instanceof Error ? err.message : String(err);
        log.warn({ err: message }, 'bad registration request from device plugin');
        this.emit('registration-rejected', {
          resource: req.resourceName,
          endpoint: req.endpoint,
          error: message,
        });
        callback(unknownStatus(message), null);
      },
    );
  }

  private async validateAndConnect(req: deviceplugin.RegisterRequest): Promise<void> {
    if (req.version !== DEVICE_PLUGIN_API_VERSION) {
      throw new KubeletSimError(
        'RegistrationRejected',
        `requested API version "${req.version}" is not supported by kubelet. Supported version is ["${DEVICE_PLUGIN_API_VERSION}"]`,
      );
    }
    if (!isExtendedResourceName(req.resourceName)) {
      throw new KubeletSimError('RegistrationRejected', `the ResourceName "${req.resourceName}" is invalid`);
    }
    await this.dialAndConnect(req.resourceName, this.endpointPath(req.endpoint), 'kubelet.sock');
  }

  /**
   * The plugin watcher's path (pluginregistration v1): the device manager's ValidatePlugin, then
   * RegisterPlugin with the absolute endpoint from GetInfo. Throws the kubelet's error text.
   */
  async registerFromWatcher(name: string, endpoint: string, versions: string[]): Promise<void> {
    if (!versions.includes(DEVICE_PLUGIN_API_VERSION)) {
      throw new KubeletSimError(
        'RegistrationRejected',
        `manager version, ${DEVICE_PLUGIN_API_VERSION}, is not among plugin supported versions [${versions.join(' ')}]`,
      );
    }
    if (!isExtendedResourceName(name)) {
      throw new KubeletSimError(
        'RegistrationRejected',
        `invalid name of device plugin socket: the ResourceName "${name}" is invalid`,
      );
    }
    let isSocket = false;
    try {
      isSocket = isAbsolute(endpoint) && lstatSync(endpoint).isSocket();
    } catch {
      isSocket = false;
    }
    if (!isSocket)
      throw new KubeletSimError(
        'RegistrationRejected',
        `failed to dial device plugin: ${endpoint} is not a Unix socket`,
      );
    this.log.info({ resource: name, endpoint, versions }, 'registering plugin at endpoint (plugin watcher)');
    await this.dialAndConnect(name, endpoint, 'plugin-watcher');
  }

  /** The plugin watcher saw the plugin's registration socket go: DeRegisterPlugin. */
  deregisterFromWatcher(name: string, endpoint: string): void {
    const ep = this.endpoints.get(name);
    if (!ep || ep.socketPath !== endpoint || ep.closed) return;
    this.log.info({ resource: name, endpoint }, 'deregistering plugin (plugin watcher)');
    this.closeEndpoint(ep);
    this.pluginDisconnected(ep);
  }

  /** Dial, GetDevicePluginOptions, then connect (PluginConnected); the client is closed on failure. */
  private async dialAndConnect(resource: string, socketPath: string, via: RegisteredVia): Promise<void> {
    const client = new deviceplugin.DevicePluginClient(`unix://${socketPath}`, credentials.createInsecure());
    let options: deviceplugin.DevicePluginOptions;
    try {
      await new Promise<void>((resolve, reject) => {
        client.waitForReady(Date.now() + this.dialTimeoutMs, (err) =>
          err
            ? reject(
                new KubeletSimError('RegistrationRejected', `failed to dial device plugin: ${err.message}`),
              )
            : resolve(),
        );
      });
      options = await new Promise<deviceplugin.DevicePluginOptions>((resolve, reject) => {
        client.getDevicePluginOptions(
          {},
          new Metadata(),
          { deadline: Date.now() + this.rpcTimeoutMs },
          (err, res) =>
            err
              ? reject(
                  new KubeletSimError(
                    'RegistrationRejected',
                    `failed to get device plugin options: ${goGrpcErrorText(err)}`,
                  ),
                )
              : resolve(res),
        );
      });
    } catch (err) {
      client.close();
      throw err;
    }
    this.connect(resource, socketPath, via, client, {
      preStartRequired: options.preStartRequired,
      getPreferredAllocationAvailable: options.getPreferredAllocationAvailable,
    });
  }

  /** `endpoint` must name a Unix socket directly inside the device-plugin directory. */
  private endpointPath(endpoint: string): string {
    if (endpoint === '' || endpoint !== basename(endpoint) || endpoint === '.' || endpoint === '..') {
      throw new KubeletSimError(
        'RegistrationRejected',
        `failed to dial device plugin: endpoint "${endpoint}" must be a socket file name inside ${this.devicePluginDir}`,
      );
    }
    if (endpoint === KUBELET_SOCKET_NAME) {
      throw new KubeletSimError(
        'RegistrationRejected',
        `failed to dial device plugin: endpoint "${endpoint}" is the kubelet's own socket`,
      );
    }
    const path = join(this.devicePluginDir, endpoint);
    let isSocket = false;
    try {
      isSocket = lstatSync(path).isSocket();
    } catch {
      throw new KubeletSimError(
        'RegistrationRejected',
        `failed to dial device plugin: ${path}: no such file or directory`,
      );
    }
    if (!isSocket)
      throw new KubeletSimError(
        'RegistrationRejected',
        `failed to dial device plugin: ${path} is not a Unix socket`,
      );
    return path;
  }

  private connect(
    resource: string,
    socketPath: string,
    via: RegisteredVia,
    client: deviceplugin.DevicePluginClient,
    options: PluginOptions,
  ): void {
    const previous = this.endpoints.get(resource);
    if (previous) {
      // A plugin that registers again replaces its old endpoint (the old stream is closed).
      this.closeEndpoint(previous);
      if (previous.graceTimer) clearTimeout(previous.graceTimer);
    }
    const ep: Endpoint = {
      resource,
      socketPath,
      client,
      stream: null,
      options,
      registeredAt: new Date(),
      registeredVia: via,
      stoppedAt: null,
      graceTimer: null,
      closed: false,
    };
    this.endpoints.set(resource, ep);
    this.removed.delete(resource);
    if (!this.healthy.has(resource)) this.healthy.set(resource, new Set());
    if (!this.unhealthy.has(resource)) this.unhealthy.set(resource, new Set());
    this.log.info({ resource, endpoint: socketPath, options }, 'device plugin connected');
    this.emit('registered', { resource, endpoint: socketPath, options });

    const stream = client.listAndWatch({});
    ep.stream = stream;
    stream.on('data', (msg: deviceplugin.ListAndWatchResponse) => {
      if (!ep.closed) this.deviceUpdate(resource, msg.devices);
    });
    const ended = (err?: ServiceError) => {
      if (ep.closed) return;
      ep.closed = true;
      this.log.warn(
        { resource, err: err ? goGrpcErrorText(err) : 'stream ended' },
        'ListAndWatch ended unexpectedly for device plugin',
      );
      client.close();
      this.pluginDisconnected(ep);
    };
    stream.on('error', ended);
    stream.on('end', () => ended());
    this.emit('changed');
  }

  private closeEndpoint(ep: Endpoint): void {
    if (ep.closed) return;
    ep.closed = true;
    ep.stream?.cancel();
    ep.client?.close();
  }

  /** The plugin is gone: all its devices count as unhealthy; capacity stays for the grace period. */
  private pluginDisconnected(ep: Endpoint): void {
    if (this.endpoints.get(ep.resource) !== ep) return;
    const resource = ep.resource;
    const healthy = this.healthy.get(resource) ?? new Set<string>();
    const unhealthy = this.unhealthy.get(resource) ?? new Set<string>();
    for (const id of healthy) unhealthy.add(id);
    this.healthy.set(resource, new Set());
    this.unhealthy.set(resource, unhealthy);
    this.startGracePeriod(ep, new Date());
    this.emit('disconnected', { resource });
    this.emit('changed');
  }

  private startGracePeriod(ep: Endpoint, stoppedAt: Date): void {
    ep.stoppedAt = stoppedAt;
    if (ep.graceTimer) clearTimeout(ep.graceTimer);
    ep.graceTimer = setTimeout(() => this.expireGracePeriod(ep), this.gracePeriodMs);
    ep.graceTimer.unref();
  }

  /** Mirrors GetCapacity dropping a stopped endpoint whose grace period expired. */
  private expireGracePeriod(ep: Endpoint): void {
    if (this.endpoints.get(ep.resource) !== ep) return;
    const resource = ep.resource;
    this.endpoints.delete(resource);
    this.healthy.delete(resource);
    this.unhealthy.delete(resource);
    this.removed.add(resource);
    this.log.info({ resource }, 'device plugin grace period expired; resource capacity is now 0');
    this.persist();
    this.emit('resource-removed', { resource });
    this.emit('changed');
  }

  /** Each ListAndWatch message is the full device list (not a delta). */
  private deviceUpdate(resource: string, devices: deviceplugin.Device[]): void {
    const all = new Map<string, DeviceView>();
    const healthy = new Set<string>();
    const unhealthy = new Set<string>();
    for (const d of devices) {
      const view: DeviceView = {
        id: d.ID,
        health: d.health === HEALTHY ? 'Healthy' : 'Unhealthy',
        numaNodes: (d.topology?.nodes ?? []).map((n) => n.ID),
      };
      all.set(d.ID, view);
      (view.health === 'Healthy' ? healthy : unhealthy).add(d.ID);
    }
    this.allDevices.set(resource, all);
    this.healthy.set(resource, healthy);
    this.unhealthy.set(resource, unhealthy);
    this.log.info(
      { resource, totalCount: all.size, healthyCount: healthy.size },
      'processed device updates for resource',
    );
    this.persist();
    this.emit('devices', { resource, devices: [...all.values()] });
    this.emit('changed');
  }

  /** Deletes every Unix socket in the directory except the checkpoint, as a starting kubelet does. */
  private cleanupPluginDirectory(): void {
    for (const name of readdirSync(this.devicePluginDir)) {
      if (name === CHECKPOINT_FILE) continue;
      const path = join(this.devicePluginDir, name);
      try {
        if (lstatSync(path).isSocket()) rmSync(path, { force: true });
      } catch (err) {
        this.log.warn({ path, err: String(err) }, 'failed to remove file');
      }
    }
  }

  // --- Views --------------------------------------------------------------------------------

  resources(): ResourceView[] {
    const names = new Set([...this.endpoints.keys(), ...this.removed, ...this.allocatedResourceNames()]);
    return [...names].sort().map((name) => this.resourceView(name));
  }

  private resourceView(name: string): ResourceView {
    const ep = this.endpoints.get(name);
    const healthy = this.healthy.get(name)?.size ?? 0;
    const unhealthy = this.unhealthy.get(name)?.size ?? 0;
    const connected = !!ep && !ep.closed && ep.stoppedAt === null;
    return {
      name,
      capacity: healthy + unhealthy,
      allocatable: healthy,
      registered: connected,
      endpoint: ep?.socketPath ?? null,
      options: ep?.options ? { ...ep.options } : null,
      registeredAt: ep?.registeredAt?.toISOString() ?? null,
      registeredVia: ep?.registeredVia ?? null,
      disconnectedAt: ep?.stoppedAt?.toISOString() ?? null,
      graceExpiresAt: ep?.stoppedAt
        ? new Date(ep.stoppedAt.getTime() + this.gracePeriodMs).toISOString()
        : null,
      removed: this.removed.has(name),
      devices: [...(this.allDevices.get(name)?.values() ?? [])].map((d) => ({
        ...d,
        numaNodes: [...d.numaNodes],
      })),
      allocated: [...this.allocatedDevices(name)].sort(),
    };
  }

  /** Node status numbers: capacity = all devices, allocatable = healthy, 0 for expired resources. */
  nodeResources(): { capacity: Map<string, number>; allocatable: Map<string, number> } {
    const capacity = new Map<string, number>();
    const allocatable = new Map<string, number>();
    for (const name of this.removed) {
      capacity.set(name, 0);
      allocatable.set(name, 0);
    }
    for (const name of this.endpoints.keys()) {
      const healthy = this.healthy.get(name)?.size ?? 0;
      capacity.set(name, healthy + (this.unhealthy.get(name)?.size ?? 0));
      allocatable.set(name, healthy);
    }
    return { capacity, allocatable };
  }

  /** Health as last reported by ListAndWatch; unknown devices count as healthy, as in the kubelet. */
  deviceHealth(resource: string, id: string): DeviceHealth {
    return this.allDevices.get(resource)?.get(id)?.health ?? 'Healthy';
  }

  /** Healthy devices with their topology (PodResources GetAllocatableResources). */
  allocatableDevices(): { resource: string; device: DeviceView }[] {
    const out: { resource: string; device: DeviceView }[] = [];
    for (const [resource, ids] of this.healthy) {
      const all = this.allDevices.get(resource);
      for (const id of ids) {
        const device = all?.get(id);
        if (device) out.push({ resource, device });
      }
    }
    return out;
  }

  containerAllocations(podUid: string, container: string): ContainerAllocation[] {
    return [...(this.podDevices.get(podUid)?.get(container)?.values() ?? [])];
  }

  podUids(): string[] {
    return [...this.podDevices.keys()];
  }

  /** True for a resource with a plugin (or its grace period) or with allocations. */
  isDevicePluginResource(resource: string): boolean {
    return this.healthy.has(resource) || this.allocatedDevices(resource).size > 0;
  }

  private allocatedResourceNames(): Set<string> {
    const names = new Set<string>();
    for (const containers of this.podDevices.values()) {
      for (const resources of containers.values()) for (const r of resources.keys()) names.add(r);
    }
    return names;
  }

  allocatedDevices(resource: string): Set<string> {
    const ids = new Set<string>();
    for (const containers of this.podDevices.values()) {
      for (const resources of containers.values())
        for (const id of resources.get(resource)?.deviceIds ?? []) ids.add(id);
    }
    return ids;
  }

  /** Frees every device of a pod (deleted or terminated); `quiet` for a dry run's scratch pod. */
  freePod(podUid: string, quiet = false): void {
    if (this.podDevices.delete(podUid) && !quiet) {
      this.persist();
      this.emit('changed');
    }
  }

  // --- Topology hints -----------------------------------------------------------------------

  /** deviceHasTopologyAlignment: any device of the resource reports NUMA nodes. */
  hasTopologyAlignment(resource: string): boolean {
    return [...(this.allDevices.get(resource)?.values() ?? [])].some((d) => d.numaNodes.length > 0);
  }

  /**
   * The device manager as a hint provider (GetTopologyHints): null (no preference) for a resource
   * without topology, [] when too few devices are free, else a hint per NUMA combination holding
   * enough free devices (reusable ones included, and they must lie inside it); preferred when as
   * narrow as the narrowest combination whose devices, free or not, could hold the request.
   */
  topologyHints(
    resource: string,
    needed: number,
    reusable: ReadonlySet<string>,
    numaIds: readonly number[],
  ): TopologyHint[] | null {
    if (!this.hasTopologyAlignment(resource)) return null;
    const all = this.allDevices.get(resource)!;
    const inUse = this.allocatedDevices(resource);
    const available = [...(this.healthy.get(resource) ?? [])].filter(
      (id) => !inUse.has(id) && !reusable.has(id),
    );
    if (available.length + reusable.size < needed) return [];
    const numaOf = (id: string) => all.get(id)?.numaNodes ?? [];
    const anyIn = (mask: Mask, id: string) => numaOf(id).some((n) => isSet(mask, n));
    return generateHints(
      numaIds,
      needed,
      (mask) => [...all.keys()].filter((id) => anyIn(mask, id)).length,
      (mask) => {
        let matching = 0;
        for (const id of reusable) {
          if (numaOf(id).length === 0) continue;
          if (!anyIn(mask, id)) return null;
          matching++;
        }
        return matching + available.filter((id) => anyIn(mask, id)).length;
      },
    );
  }

  // --- Allocation ---------------------------------------------------------------------------

  /**
   * Picks and allocates `needed` devices of `resource` for one container, as the kubelet's
   * devicesToAllocate + allocateContainerResources: reusable (init-container) devices first, then
   * the devices inside the Topology Manager's `affinity` (the plugin's preferred allocation among
   * them when they are more than needed), then the plugin's preference among the rest, then the
   * rest; then Allocate. A dry run calls no plugin RPC and leaves no trace. Throws the kubelet's
   * error text; nothing stays allocated on failure.
   */
  async allocate(
    podUid: string,
    container: string,
    resource: string,
    needed: number,
    reusable: Set<string>,
    affinity: Mask | null = null,
    dryRun = false,
  ): Promise<ContainerAllocation | null> {
    const existing = this.podDevices.get(podUid)?.get(container)?.get(resource);
    if (existing) {
      if (existing.deviceIds.length !== needed) {
        throw new Error(
          `pod "${podUid}" container "${container}" changed request for resource "${resource}" from ${existing.deviceIds.length} to ${needed}`,
        );
      }
      return null;
    }
    const healthy = this.healthy.get(resource);
    if (!healthy) throw new Error(`cannot allocate unregistered device ${resource}`);
    if (healthy.size === 0)
      throw new Error(`no healthy devices present; cannot allocate unhealthy devices ${resource}`);

    const { picked, preferred } = await this.pickDevices(
      podUid,
      container,
      resource,
      needed,
      reusable,
      affinity,
      dryRun,
    );
    let response: deviceplugin.ContainerAllocateResponse = {
      envs: {},
      mounts: [],
      devices: [],
      annotations: {},
      cdiDevices: [],
    };
    if (!dryRun) {
      const ep = this.endpoints.get(resource);
      if (!ep) throw new Error(`unknown Device Plugin ${resource}`);
      const client = this.liveClient(ep);
      const resp = await new Promise<deviceplugin.AllocateResponse>((resolve, reject) => {
        client.allocate(
          { containerRequests: [{ devicesIds: picked }] },
          new Metadata(),
          { deadline: Date.now() + this.rpcTimeoutMs },
          (err, res) => (err ? reject(new Error(goGrpcErrorText(err))) : resolve(res)),
        );
      });
      const first = resp.containerResponses[0];
      if (!first) {
        throw new Error(
          `no containers return in allocation response &AllocateResponse{ContainerResponses:[]*ContainerAllocateResponse{},}`,
        );
      }
      response = first;
    }
    const byNuma = new Map<number, string[]>();
    const devices = this.allDevices.get(resource);
    for (const id of picked) {
      const nodes = devices?.get(id)?.numaNodes ?? [];
      for (const n of nodes.length > 0 ? nodes : [NODE_WITHOUT_TOPOLOGY])
        byNuma.set(n, [...(byNuma.get(n) ?? []), id]);
    }
    const allocation: ContainerAllocation = { resource, deviceIds: picked, byNuma, response, preferred };
    this.setAllocation(podUid, container, allocation);
    if (!dryRun) {
      this.persist();
      this.emit('changed');
    }
    return allocation;
  }

  private setAllocation(podUid: string, container: string, allocation: ContainerAllocation): void {
    let containers = this.podDevices.get(podUid);
    if (!containers) {
      containers = new Map<string, Map<string, ContainerAllocation>>();
      this.podDevices.set(podUid, containers);
    }
    let resources = containers.get(container);
    if (!resources) {
      resources = new Map<string, ContainerAllocation>();
      containers.set(container, resources);
    }
    resources.set(allocation.resource, allocation);
  }

  private liveClient(ep: Endpoint): deviceplugin.DevicePluginClient {
    if (!ep.client || ep.closed || ep.stoppedAt) throw new Error(`endpoint ${ep.resource} has been stopped`);
    return ep.client;
  }

  private async pickDevices(
    podUid: string,
    container: string,
    resource: string,
    required: number,
    reusable: Set<string>,
    affinity: Mask | null,
    dryRun: boolean,
  ): Promise<{ picked: string[]; preferred: string[] | null }> {
    const allocated: string[] = [];
    let preferredAnswer: string[] | null = null;
    let needed = required;
    const takeFrom = (ids: Iterable<string>): boolean => {
      for (const id of ids) {
        if (needed === 0) break;
        if (allocated.includes(id)) continue;
        allocated.push(id);
        needed--;
      }
      return needed === 0;
    };
    const done = () => ({ picked: allocated, preferred: preferredAnswer });
    if (takeFrom(reusable)) return done();

    const inUse = this.allocatedDevices(resource);
    const ordered = this.orderedDevices(resource);
    const available = ordered.filter(
      (id) => this.healthy.get(resource)?.has(id) && !inUse.has(id) && !allocated.includes(id),
    );
    if (available.length < needed) {
      throw new Error(
        `requested number of devices unavailable for ${resource}. Requested: ${needed}, Available: ${available.length}`,
      );
    }
    const preferred = async (candidates: string[]): Promise<string[]> => {
      if (dryRun) return [];
      const answer = await this.preferredAllocation(
        podUid,
        container,
        resource,
        [...new Set([...candidates, ...allocated])],
        [...allocated],
        required,
      );
      if (this.endpoints.get(resource)?.options?.getPreferredAllocationAvailable) preferredAnswer = answer;
      return answer;
    };
    const fail = () =>
      new Error(
        `unexpectedly allocated less resources than required. Requested: ${required}, Got: ${required - needed}`,
      );
    // Without topology there is nothing to align: the plugin's preference, then first-fit.
    if (!this.hasTopologyAlignment(resource)) {
      const pref = await preferred(available);
      if (takeFrom(pref.filter((id) => available.includes(id)))) return done();
      if (takeFrom(available)) return done();
      throw fail();
    }
    const { aligned, unaligned, noAffinity } = this.filterByAffinity(resource, available, affinity);
    if (needed < aligned.length) {
      const pref = await preferred(aligned);
      if (takeFrom(pref.filter((id) => aligned.includes(id)))) return done();
      if (takeFrom(aligned)) return done();
      throw fail();
    }
    if (takeFrom(aligned)) return done();
    const pref = await preferred(available);
    if (takeFrom(pref.filter((id) => available.includes(id)))) return done();
    if (takeFrom(unaligned)) return done();
    if (takeFrom(noAffinity)) return done();
    throw fail();
  }

  /** Devices in first-fit order: by lowest NUMA node, then the plugin's order; no topology last. */
  private orderedDevices(resource: string): string[] {
    const devices = [...(this.allDevices.get(resource)?.values() ?? [])];
    const rank = (d: DeviceView) =>
      d.numaNodes.length === 0 ? Number.MAX_SAFE_INTEGER : Math.min(...d.numaNodes);
    return devices
      .map((d, i) => ({ d, i }))
      .sort((a, b) => rank(a.d) - rank(b.d) || a.i - b.i)
      .map(({ d }) => d.id);
  }

  /**
   * filterByAffinity: available devices split into those on NUMA nodes inside the affinity,
   * those on other NUMA nodes, and those without topology. NUMA nodes are visited affinity
   * first, then by how many available devices they hold (more first), then by ID.
   */
  private filterByAffinity(
    resource: string,
    available: string[],
    affinity: Mask | null,
  ): { aligned: string[]; unaligned: string[]; noAffinity: string[] } {
    if (affinity === null) return { aligned: [], unaligned: [], noAffinity: [...available] };
    const all = this.allDevices.get(resource);
    const perNode = new Map<number, string[]>();
    for (const id of available) {
      const nodes = all?.get(id)?.numaNodes ?? [];
      for (const n of nodes.length ? nodes : [NODE_WITHOUT_TOPOLOGY])
        perNode.set(n, [...(perNode.get(n) ?? []), id]);
    }
    const inMask = (n: number) => n !== NODE_WITHOUT_TOPOLOGY && isSet(affinity, n);
    const nodes = [...perNode.keys()].sort(
      (a, b) =>
        Number(inMask(b)) - Number(inMask(a)) ||
        Number(a === NODE_WITHOUT_TOPOLOGY) - Number(b === NODE_WITHOUT_TOPOLOGY) ||
        perNode.get(b)!.length - perNode.get(a)!.length ||
        a - b,
    );
    const seen = new Set<string>();
    const out = { aligned: [] as string[], unaligned: [] as string[], noAffinity: [] as string[] };
    for (const n of nodes) {
      const list = inMask(n) ? out.aligned : n === NODE_WITHOUT_TOPOLOGY ? out.noAffinity : out.unaligned;
      for (const id of perNode.get(n)!) {
        if (seen.has(id)) continue;
        seen.add(id);
        list.push(id);
      }
    }
    return out;
  }

  private async preferredAllocation(
    podUid: string,
    container: string,
    resource: string,
    available: string[],
    mustInclude: string[],
    size: number,
  ): Promise<string[]> {
    const ep = this.endpoints.get(resource);
    if (!ep) throw new Error(`endpoint not found in cache for a registered resource: ${resource}`);
    if (!ep.options?.getPreferredAllocationAvailable) return [];
    const client = this.liveClient(ep);
    this.log.debug(
      { resource, podUid, container, rpc: 'GetPreferredAllocation' },
      'issuing a GetPreferredAllocation call for container',
    );
    const resp = await new Promise<deviceplugin.PreferredAllocationResponse>((resolve, reject) => {
      client.getPreferredAllocation(
        {
          containerRequests: [
            { availableDeviceIDs: available, mustIncludeDeviceIDs: mustInclude, allocationSize: size },
          ],
        },
        new Metadata(),
        { deadline: Date.now() + this.rpcTimeoutMs },
        (err, res) =>
          err
            ? reject(
                new Error(
                  `device plugin GetPreferredAllocation rpc failed with err: ${goGrpcErrorText(err)}`,
                ),
              )
            : resolve(res),
      );
    });
    return resp.containerResponses[0]?.deviceIDs ?? [];
  }

  /** PreStartContainer before a container (re)starts, when the plugin asked for it. */
  async preStartContainer(podUid: string, container: string, resource: string): Promise<void> {
    const ep = this.endpoints.get(resource);
    if (!ep) throw new Error(`endpoint not found in cache for a registered resource: ${resource}`);
    if (!ep.options?.preStartRequired) return;
    const allocation = this.podDevices.get(podUid)?.get(container)?.get(resource);
    if (!allocation)
      throw new Error(
        `no devices found allocated in local cache for pod ${podUid}, container ${container}, resource ${resource}`,
      );
    const client = this.liveClient(ep);
    await new Promise<void>((resolve, reject) => {
      client.preStartContainer(
        { devicesIds: allocation.deviceIds },
        new Metadata(),
        { deadline: Date.now() + this.rpcTimeoutMs },
        (err) =>
          err
            ? reject(
                new Error(`device plugin PreStartContainer rpc failed with err: ${goGrpcErrorText(err)}`),
              )
            : resolve(),
      );
    });
  }

  // --- Checkpoint ---------------------------------------------------------------------------

  private persist(): void {
    const data: CheckpointData = { podDevices: [], registeredDevices: {} };
    for (const [podUid, containers] of this.podDevices) {
      for (const [container, resources] of containers) {
        for (const a of resources.values()) {
          data.podDevices.push({
            podUid,
            container,
            resource: a.resource,
            byNuma: Object.fromEntries(a.byNuma),
            response: a.response,
          });
        }
      }
    }
    for (const [resource, ids] of this.healthy) data.registeredDevices[resource] = [...ids];
    try {
      writeCheckpoint(this.devicePluginDir, data);
    } catch (err) {
      this.log.error({ err: String(err) }, 'failed to write checkpoint file');
    }
  }

  /** Allocations come back; registered resources restart at zero devices until plugins return. */
  private restoreCheckpoint(): void {
    const data = readCheckpoint(this.devicePluginDir, this.log);
    if (!data) return;
    for (const entry of data.podDevices) {
      const byNuma = new Map(Object.entries(entry.byNuma).map(([n, ids]) => [Number(n), ids] as const));
      const deviceIds = [...new Set([...byNuma.values()].flat())];
      this.setAllocation(entry.podUid, entry.container, {
        resource: entry.resource,
        deviceIds,
        byNuma,
        response: entry.response,
        preferred: null,
      });
    }
    const now = new Date();
    for (const resource of Object.keys(data.registeredDevices)) {
      this.healthy.set(resource, new Set());
      this.unhealthy.set(resource, new Set());
      const ep: Endpoint = {
        resource,
        socketPath: null,
        client: null,
        stream: null,
        options: null,
        registeredAt: null,
        registeredVia: null,
        stoppedAt: null,
        graceTimer: null,
        closed: true,
      };
      this.endpoints.set(resource, ep);
      this.startGracePeriod(ep, now);
    }
  }
}
