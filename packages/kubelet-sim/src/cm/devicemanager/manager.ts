// The kubelet's device manager (pkg/kubelet/cm/devicemanager, release-1.33). The folder follows
// upstream's files: manager.go (here: the plugin callbacks, the per-resource healthy/unhealthy
// device sets behind node capacity and allocatable, the stop grace period, the checkpoint; its
// allocateContainerResources, devicesToAllocate and filterByAffinity are in allocation.ts),
// endpoint.go (one endpoint per plugin), pod_devices.go, types.go, checkpoint/ and plugin/v1beta1/
// (the Registration server, the plugin-watcher handler, the client). topology_hints.go and the pick
// of devices are @plugboard/topology's, shared with the gateway's prediction.

import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import { HEALTHY, type deviceplugin, type DeviceHealth } from '@plugboard/proto';
import { goGrpcErrorText } from '../../util/grpc-errors.js';
import {
  generateDeviceTopologyHints,
  type DeviceHintProvider,
  type Mask,
  type TopologyHint,
} from '@plugboard/topology';
import { allocateContainerResources } from './allocation.js';
import { newCheckpointManager } from '../../checkpointmanager/checkpoint-manager.js';
import { CoalescedCheckpointWriter } from '../../checkpointmanager/coalesced-writer.js';
import {
  CHECKPOINT_FILE,
  marshalCheckpoint,
  readCheckpoint,
  type CheckpointData,
} from './checkpoint/checkpoint.js';
import { Endpoint, endpointView, type EndpointConnection } from './endpoint.js';
import { connectPlugin, runListAndWatch } from './plugin/v1beta1/client.js';
import { DevicePluginHandler } from './plugin/v1beta1/handler.js';
import { RegistrationServer, type ClientHandler } from './plugin/v1beta1/server.js';
import { PodDevices } from './pod-devices.js';
import {
  DEFAULT_DIAL_TIMEOUT_MS,
  DEFAULT_GRACE_PERIOD_MS,
  DEFAULT_RPC_TIMEOUT_MS,
  type ContainerAllocation,
  type DeviceManagerEvents,
  type DeviceManagerOptions,
  type DeviceView,
  type RegisteredVia,
  type ResourceView,
} from './types.js';

export class DeviceManager
  extends EventEmitter<DeviceManagerEvents>
  implements ClientHandler, DeviceHintProvider
{
  readonly devicePluginDir: string;
  readonly socketPath: string;
  private readonly gracePeriodMs: number;
  private readonly dialTimeoutMs: number;
  private readonly rpcTimeoutMs: number;
  private readonly log: Logger;
  private readonly server: RegistrationServer;
  private readonly checkpoint: CoalescedCheckpointWriter;

  private endpoints = new Map<string, Endpoint>();
  /** Latest ListAndWatch answer per resource, in the plugin's order. */
  private allDevices = new Map<string, Map<string, DeviceView>>();
  private healthy = new Map<string, Set<string>>();
  private unhealthy = new Map<string, Set<string>>();
  /** Resources whose grace period expired; the node reports them as 0. */
  private readonly removed = new Set<string>();
  private podDevices = new PodDevices();

  constructor(opts: DeviceManagerOptions) {
    super();
    this.devicePluginDir = opts.devicePluginDir;
    this.gracePeriodMs = opts.gracePeriodMs ?? DEFAULT_GRACE_PERIOD_MS;
    this.dialTimeoutMs = opts.dialTimeoutMs ?? DEFAULT_DIAL_TIMEOUT_MS;
    this.rpcTimeoutMs = opts.rpcTimeoutMs ?? DEFAULT_RPC_TIMEOUT_MS;
    this.log = opts.logger.child({ component: 'device-manager' });
    this.server = new RegistrationServer({
      devicePluginDir: this.devicePluginDir,
      handler: this,
      onRejected: (e) => this.emit('registration-rejected', e),
      log: this.log,
    });
    this.socketPath = this.server.socketPath;
    this.checkpoint = new CoalescedCheckpointWriter(
      opts.checkpointManager ?? newCheckpointManager(this.devicePluginDir),
      CHECKPOINT_FILE,
      () => this.checkpointData(),
      (err) => this.log.error({ err: String(err) }, 'failed to write checkpoint file'),
    );
  }

  /** Reads the checkpoint, then the server deletes every socket in the directory and serves. */
  async start(): Promise<void> {
    this.restoreCheckpoint(await readCheckpoint(this.checkpoint, this.log));
    await this.server.start();
  }

  /** Stops serving and disconnects every plugin; returns once the checkpoint is on disk. */
  async stop(): Promise<void> {
    for (const ep of this.endpoints.values()) {
      ep.close();
      ep.clearGraceTimer();
    }
    await this.server.stop();
    this.writeCheckpoint();
    await this.checkpoint.flush();
  }

  /**
   * A kubelet restart as the device manager sees it: registrations and device lists live only in
   * memory and are lost; allocations come back from the checkpoint; every socket is deleted.
   */
  async restart(): Promise<void> {
    await this.stop();
    await this.startAfterStop();
  }

  /** The second half of `restart`: a kubelet starting again after `stop`, from its checkpoint. */
  async startAfterStop(): Promise<void> {
    const data = await readCheckpoint(this.checkpoint, this.log);
    this.endpoints = new Map();
    this.allDevices = new Map();
    this.healthy = new Map();
    this.unhealthy = new Map();
    // `removed` survives: the Node object (kept by the API server) still reports those at 0.
    this.podDevices = new PodDevices();
    this.restoreCheckpoint(data);
    await this.server.start();
    this.emit('changed');
  }

  /** GetWatcherHandler: the plugin watcher's handler for `DevicePlugin` sockets. */
  getWatcherHandler(): DevicePluginHandler {
    return new DevicePluginHandler(this, this.log);
  }

  // --- Plugin connections (ClientHandler) ------------------------------------------------------

  async connectClient(resource: string, socketPath: string, via: RegisteredVia): Promise<void> {
    const { client, options } = await connectPlugin(socketPath, this.dialTimeoutMs, this.rpcTimeoutMs);
    this.pluginConnected(resource, { socketPath, client, options, via });
  }

  disconnectClient(resource: string, socketPath: string): void {
    const ep = this.endpoints.get(resource);
    if (!ep || ep.socketPath !== socketPath || ep.closed) return;
    this.log.info({ resource, endpoint: socketPath }, 'deregistering plugin (plugin watcher)');
    ep.close();
    this.pluginDisconnected(ep);
  }

  /** PluginConnected, then the endpoint's ListAndWatch stream (client.Run). */
  private pluginConnected(resource: string, connection: EndpointConnection): void {
    const { socketPath, client, options } = connection;
    const ep = new Endpoint(resource, connection, this.rpcTimeoutMs);
    const previous = this.endpoints.get(resource);
    if (previous) {
      // A plugin that registers again replaces its old endpoint (the old stream is closed).
      previous.close();
      previous.clearGraceTimer();
    }
    this.endpoints.set(resource, ep);
    this.removed.delete(resource);
    if (!this.healthy.has(resource)) this.healthy.set(resource, new Set());
    if (!this.unhealthy.has(resource)) this.unhealthy.set(resource, new Set());
    this.log.info({ resource, endpoint: socketPath, options }, 'device plugin connected');
    this.emit('registered', { resource, endpoint: socketPath, options });

    ep.stream = runListAndWatch(
      client,
      (msg) => {
        if (!ep.closed) this.pluginListAndWatchReceiver(resource, msg);
      },
      (err) => {
        if (ep.closed) return;
        this.log.warn(
          { resource, err: err ? goGrpcErrorText(err) : 'stream ended' },
          'ListAndWatch ended unexpectedly for device plugin',
        );
        ep.streamEnded();
        this.pluginDisconnected(ep);
      },
    );
    this.emit('changed');
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
    ep.setStopTime(new Date(), this.gracePeriodMs, () => this.expireGracePeriod(ep));
    this.emit('disconnected', { resource });
    this.emit('changed');
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
    this.writeCheckpoint();
    this.emit('resource-removed', { resource });
    this.emit('changed');
  }

  /**
   * PluginListAndWatchReceiver (genericDeviceUpdateCallback): each ListAndWatch message is the
   * full device list, not a delta. The checkpoint (RegisteredDevices) follows off this path.
   */
  pluginListAndWatchReceiver(resource: string, msg: deviceplugin.ListAndWatchResponse): void {
    const all = new Map<string, DeviceView>();
    const healthy = new Set<string>();
    const unhealthy = new Set<string>();
    for (const d of msg.devices) {
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
    this.writeCheckpoint();
    this.emit('devices', { resource, devices: [...all.values()] });
    this.emit('changed');
  }

  // --- Views --------------------------------------------------------------------------------

  resources(): ResourceView[] {
    const names = new Set([...this.endpoints.keys(), ...this.removed, ...this.podDevices.resourceNames()]);
    return [...names].sort().map((name) => this.resourceView(name));
  }

  private resourceView(name: string): ResourceView {
    const healthy = this.healthy.get(name)?.size ?? 0;
    return {
      name,
      capacity: healthy + (this.unhealthy.get(name)?.size ?? 0),
      allocatable: healthy,
      ...endpointView(this.endpoints.get(name), this.gracePeriodMs),
      removed: this.removed.has(name),
      devices: [...(this.allDevices.get(name)?.values() ?? [])].map((d) => ({
        ...d,
        numaNodes: [...d.numaNodes],
      })),
      allocated: [...this.allocatedDevices(name)].sort(),
    };
  }

  /** GetCapacity: capacity = all devices, allocatable = healthy, 0 for expired resources. */
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

  /** GetAllocatableDevices: healthy devices with their topology (PodResources). */
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
    return this.podDevices.containerAllocations(podUid, container);
  }

  podUids(): string[] {
    return this.podDevices.podUids();
  }

  /** True for a resource with a plugin (or its grace period) or with allocations. */
  isDevicePluginResource(resource: string): boolean {
    return this.healthy.has(resource) || this.allocatedDevices(resource).size > 0;
  }

  allocatedDevices(resource: string): Set<string> {
    return this.podDevices.devices(resource);
  }

  /** Frees every device of a pod (deleted or terminated); `quiet` for a dry run's scratch pod. */
  freePod(podUid: string, quiet = false): void {
    if (this.podDevices.delete(podUid) && !quiet) {
      this.writeCheckpoint();
      this.emit('changed');
    }
  }

  /** The device manager as a hint provider (GetTopologyHints) for one resource request. */
  topologyHints(
    resource: string,
    needed: number,
    reusable: ReadonlySet<string>,
    numaIds: readonly number[],
  ): TopologyHint[] | null {
    return generateDeviceTopologyHints(
      this.allDevices.get(resource),
      this.healthy.get(resource),
      this.allocatedDevices(resource),
      needed,
      reusable,
      numaIds,
    );
  }

  // --- Allocation ---------------------------------------------------------------------------

  /**
   * Allocates `needed` devices of `resource` to one container (see allocation.ts). A dry run calls
   * no plugin RPC and leaves no trace. Throws the kubelet's error text; nothing stays allocated on
   * failure. Null when the container already holds the devices.
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
    const allocation = await allocateContainerResources(
      { podUid, container, resource, required: needed, reusable, affinity, dryRun },
      {
        existing: this.podDevices.containerDevices(podUid, container, resource),
        devices: () => this.allDevices.get(resource),
        healthy: this.healthy.get(resource),
        inUse: () => this.allocatedDevices(resource),
        endpoint: () => this.endpoints.get(resource),
      },
      this.log,
    );
    if (!allocation) return null;
    this.podDevices.insert(podUid, container, allocation);
    if (!dryRun) {
      this.writeCheckpoint();
      this.emit('changed');
    }
    return allocation;
  }

  /** callPreStartContainerIfNeeded: PreStartContainer before a container (re)starts, when asked for. */
  async preStartContainer(podUid: string, container: string, resource: string): Promise<void> {
    const ep = this.endpoints.get(resource);
    if (!ep) throw new Error(`endpoint not found in cache for a registered resource: ${resource}`);
    if (!ep.options?.preStartRequired) return;
    const allocation = this.podDevices.containerDevices(podUid, container, resource);
    if (!allocation)
      throw new Error(
        `no devices found allocated in local cache for pod ${podUid}, container ${container}, resource ${resource}`,
      );
    await ep.preStartContainer(allocation.deviceIds);
  }

  // --- Checkpoint ---------------------------------------------------------------------------

  /**
   * writeCheckpoint, where the kubelet calls it (ListAndWatch updates, allocations, resources
   * dropped after their grace period) and where the sim also changes what it holds (freed pods,
   * stop). Coalesced and asynchronous: the state is taken when the write runs.
   */
  private writeCheckpoint(): void {
    this.checkpoint.request();
  }

  /** Resolves once every checkpoint write requested so far is on disk. */
  flushCheckpoint(): Promise<void> {
    return this.checkpoint.flush();
  }

  /** Pod devices and the healthy devices of every registered resource (RegisteredDevices). */
  private checkpointData(): string {
    const registeredDevices = Object.fromEntries(
      [...this.healthy].map(([resource, ids]) => [resource, [...ids]]),
    );
    return marshalCheckpoint({ podDevices: this.podDevices.toCheckpointData(), registeredDevices });
  }

  /** Allocations come back; registered resources restart at zero devices until plugins return. */
  private restoreCheckpoint(data: CheckpointData | null): void {
    if (!data) return;
    this.podDevices.fromCheckpointData(data.podDevices);
    const now = new Date();
    for (const resource of Object.keys(data.registeredDevices)) {
      this.healthy.set(resource, new Set());
      this.unhealthy.set(resource, new Set());
      // newStoppedEndpointImpl: no plugin yet, the grace period already running.
      const ep = new Endpoint(resource, null, this.rpcTimeoutMs);
      this.endpoints.set(resource, ep);
      ep.setStopTime(now, this.gracePeriodMs, () => this.expireGracePeriod(ep));
    }
  }
}
