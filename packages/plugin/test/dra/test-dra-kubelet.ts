// A minimal kubelet for the DRA tests, written with @grpc/grpc-js and @plugboard/proto only (not the
// driver's own classes): like the kubelet's plugin watcher it watches the plugins_registry
// directory, calls GetInfo on each new registration socket, checks the type and the versions (as
// the kubelet's DRA handler does: it needs v1.DRAPlugin or v1beta1.DRAPlugin and picks v1), reports
// NotifyRegistrationStatus, then dials the advertised endpoint and, if a health service is listed,
// opens NodeWatchResources (v1 preferred over v1alpha1, as pickHealthService does) and keeps every
// message. A registration socket that disappears deregisters the driver; `restart()` drops every
// connection and discovers the sockets again, as a restarted kubelet does. Where the directory
// cannot be watched (inotify instances exhausted, or a test injecting that) it is polled, as the
// kubelet's reconciler would still find the sockets; `watchMode` says which.
// (kubelet-sim has a plugin watcher, but it is not exported and plugin → kubelet-sim would make a
// dependency cycle; kubelet-sim gets its DRA side in part 2.)
import { EventEmitter, once } from 'node:events';
import { lstat, readdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { credentials, Metadata, type ClientReadableStream, type ServiceError } from '@grpc/grpc-js';
import {
  DRA_PLUGIN_SERVICE_V1,
  DRA_PLUGIN_TYPE,
  DRA_RESOURCE_HEALTH_SERVICE_V1,
  DRA_RESOURCE_HEALTH_SERVICE_V1ALPHA1,
  drahealthv1,
  drahealthv1alpha1,
  drav1,
  pluginregistration,
  watchDirectory,
  type DirectoryWatch,
  type WatchFactory,
} from '@plugboard/proto';

export interface DraPluginConnection {
  socket: string;
  info: pluginregistration.PluginInfo;
  client: drav1.DRAPluginClient;
  healthService: string | null;
  /** Whether the advertised endpoint existed when GetInfo answered (serve first, then register). */
  endpointExistedAtInfo: boolean;
  health: ClientReadableStream<drahealthv1.NodeWatchResourcesResponse> | null;
  /** Every NodeWatchResources message, in order. */
  healthUpdates: drahealthv1.DeviceHealth[][];
}

interface Events {
  registered: [conn: DraPluginConnection];
  rejected: [event: { socket: string; error: string }];
  deregistered: [event: { socket: string; name: string }];
  health: [name: string, devices: drahealthv1.DeviceHealth[]];
}

function unary<Res>(fn: (cb: (err: ServiceError | null, res: Res) => void) => void): Promise<Res> {
  return new Promise((resolve, reject) => fn((err, res) => (err ? reject(err) : resolve(res))));
}

export class TestDraKubelet extends EventEmitter<Events> {
  readonly registryDir: string;
  readonly plugins = new Map<string, DraPluginConnection>();
  /** Every GetInfo answer, in order. */
  readonly infos: pluginregistration.PluginInfo[] = [];
  /** Every registration that failed, as the kubelet would log it. */
  readonly rejections: { socket: string; error: string }[] = [];
  /** Make the registration fail with this error (NotifyRegistrationStatus false). */
  rejectWith: string | null = null;
  #known = new Set<string>();
  #retries = new Set<NodeJS.Timeout>();
  #watcher: DirectoryWatch | null = null;
  readonly #watch: WatchFactory | undefined;

  constructor(registryDir: string, options: { watch?: WatchFactory } = {}) {
    super();
    this.registryDir = registryDir;
    this.#watch = options.watch;
    this.on('rejected', (r) => this.rejections.push(r));
  }

  start(): void {
    this.#watcher = watchDirectory(
      this.registryDir,
      (name) => void (name ? this.#check(join(this.registryDir, name)) : this.#scan()),
      { pollMs: 100, persistent: true, ...(this.#watch ? { watch: this.#watch } : {}) },
    );
    void this.#scan();
  }

  /** `poll` (with the reason) when the registry directory could not be watched. */
  get watchMode(): { mode: 'watch' | 'poll'; reason: string | null } | null {
    return this.#watcher ? { mode: this.#watcher.mode, reason: this.#watcher.reason } : null;
  }

  async #scan(): Promise<void> {
    for (const name of await readdir(this.registryDir)) await this.#check(join(this.registryDir, name));
  }

  async #check(socket: string): Promise<void> {
    // The plugin watcher ignores files starting with '.' (pluginwatcher's handleCreateEvent): a
    // driver binds its registration socket under such a name and renames it into place.
    if (basename(socket).startsWith('.')) return;
    const isSocket = await lstat(socket).then(
      (s) => s.isSocket(),
      () => false,
    );
    if (isSocket && !this.#known.has(socket)) {
      this.#known.add(socket);
      await this.#register(socket).catch((err: Error) => {
        this.emit('rejected', { socket, error: `registration failed: ${err.message}` });
        // The kubelet's reconciler tries a failed registration again on its next loop (1 s): the
        // socket file exists from bind(), a moment before the plugin listens on it.
        this.#known.delete(socket);
        const retry = setTimeout(() => {
          this.#retries.delete(retry);
          void this.#check(socket);
        }, 1000);
        this.#retries.add(retry);
      });
    } else if (!isSocket && this.#known.has(socket)) {
      this.#known.delete(socket);
      for (const [name, conn] of this.plugins) {
        if (conn.socket !== socket) continue;
        this.#drop(name);
        this.emit('deregistered', { socket, name });
      }
    }
  }

  async #register(socket: string): Promise<void> {
    const reg = new pluginregistration.RegistrationClient(`unix://${socket}`, credentials.createInsecure());
    try {
      const info = await unary<pluginregistration.PluginInfo>((cb) => reg.getInfo({}, new Metadata(), cb));
      this.infos.push(info);
      const endpointExistedAtInfo = await lstat(info.endpoint).then(
        (s) => s.isSocket(),
        () => false,
      );
      const notify = (status: pluginregistration.RegistrationStatus): Promise<unknown> =>
        unary((cb) => reg.notifyRegistrationStatus(status, new Metadata(), cb)).catch(() => undefined);
      let error = this.rejectWith;
      if (!error && info.type !== DRA_PLUGIN_TYPE) error = `unknown plugin type ${info.type}`;
      if (!error && !info.supportedVersions.includes(DRA_PLUGIN_SERVICE_V1))
        error = `none of the versions ${info.supportedVersions.join(', ')} is supported`;
      if (error) {
        await notify({ pluginRegistered: false, error });
        this.emit('rejected', { socket, error });
        return;
      }
      this.#drop(info.name);
      const client = new drav1.DRAPluginClient(`unix://${info.endpoint}`, credentials.createInsecure());
      const healthService = info.supportedVersions.includes(DRA_RESOURCE_HEALTH_SERVICE_V1)
        ? DRA_RESOURCE_HEALTH_SERVICE_V1
        : info.supportedVersions.includes(DRA_RESOURCE_HEALTH_SERVICE_V1ALPHA1)
          ? DRA_RESOURCE_HEALTH_SERVICE_V1ALPHA1
          : null;
      const conn: DraPluginConnection = {
        socket,
        info,
        client,
        healthService,
        endpointExistedAtInfo,
        health: null,
        healthUpdates: [],
      };
      this.plugins.set(info.name, conn);
      await notify({ pluginRegistered: true, error: '' });
      if (healthService) this.#watchHealth(conn);
      this.emit('registered', conn);
    } finally {
      reg.close();
    }
  }

  #watchHealth(conn: DraPluginConnection): void {
    const HealthClient =
      conn.healthService === DRA_RESOURCE_HEALTH_SERVICE_V1
        ? drahealthv1.DRAResourceHealthClient
        : drahealthv1alpha1.DRAResourceHealthClient;
    const client = new HealthClient(`unix://${conn.info.endpoint}`, credentials.createInsecure());
    const stream = client.nodeWatchResources({});
    stream.on('data', (msg: drahealthv1.NodeWatchResourcesResponse) => {
      conn.healthUpdates.push(msg.devices);
      this.emit('health', conn.info.name, msg.devices);
    });
    stream.on('error', () => undefined);
    stream.on('close', () => client.close());
    conn.health = stream;
  }

  #drop(name: string): void {
    const old = this.plugins.get(name);
    if (!old) return;
    old.health?.cancel();
    old.client.close();
    this.plugins.delete(name);
  }

  plugin(name: string): DraPluginConnection {
    const conn = this.plugins.get(name);
    if (!conn) throw new Error(`driver ${name} is not registered`);
    return conn;
  }

  prepare(name: string, claims: drav1.Claim[]): Promise<drav1.NodePrepareResourcesResponse> {
    const client = this.plugin(name).client;
    return unary((cb) => client.nodePrepareResources({ claims }, cb));
  }

  unprepare(name: string, claims: drav1.Claim[]): Promise<drav1.NodeUnprepareResourcesResponse> {
    const client = this.plugin(name).client;
    return unary((cb) => client.nodeUnprepareResources({ claims }, cb));
  }

  /**
   * The next registration of driver `name` (or the current one when `current` and registered). The
   * bound is for a driver that never registers; a driver starting on a loaded machine (two busy
   * cores beside a whole `npm test`) took over 5 s, so it is generous.
   */
  async registered(
    name: string,
    options: { current?: boolean; timeoutMs?: number } = {},
  ): Promise<DraPluginConnection> {
    const now = this.plugins.get(name);
    if (options.current !== false && now) return now;
    const signal = AbortSignal.timeout(options.timeoutMs ?? 60_000);
    for (;;) {
      const [conn] = (await once(this, 'registered', { signal })) as [DraPluginConnection];
      if (conn.info.name === name) return conn;
    }
  }

  /** The first health list of driver `name` (the latest received, or a later one) matching `predicate`. */
  async health(
    name: string,
    predicate: (devices: drahealthv1.DeviceHealth[]) => boolean,
    timeoutMs = 5000,
  ): Promise<drahealthv1.DeviceHealth[]> {
    const last = this.plugins.get(name)?.healthUpdates.at(-1);
    if (last && predicate(last)) return last;
    const signal = AbortSignal.timeout(timeoutMs);
    for (;;) {
      const [driver, devices] = (await once(this, 'health', { signal })) as [
        string,
        drahealthv1.DeviceHealth[],
      ];
      if (driver === name && predicate(devices)) return devices;
    }
  }

  /** A restarted kubelet: every connection dropped, every registration socket discovered again. */
  async restart(): Promise<void> {
    for (const name of [...this.plugins.keys()]) this.#drop(name);
    this.#known.clear();
    await this.#scan();
  }

  stop(): void {
    this.#watcher?.close();
    this.#watcher = null;
    for (const retry of this.#retries) clearTimeout(retry);
    this.#retries.clear();
    for (const name of [...this.plugins.keys()]) this.#drop(name);
  }
}

export const healthOf = (
  devices: readonly drahealthv1.DeviceHealth[],
  deviceName: string,
): drahealthv1.DeviceHealth | undefined => devices.find((d) => d.device?.deviceName === deviceName);
