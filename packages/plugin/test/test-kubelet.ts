// A minimal kubelet written for these tests with @grpc/grpc-js and @plugboard/proto only (not the
// plugin's own classes): serves v1beta1.Registration on <dir>/kubelet.sock and, like the real
// device manager, dials the plugin's endpoint while handling Register, calls
// GetDevicePluginOptions, then opens one ListAndWatch stream per registration. `restart()` does
// what a starting kubelet does: delete every socket in the directory and create a new kubelet.sock.
import { EventEmitter, once } from 'node:events';
import { mkdtemp, readdir, rm, stat, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  credentials,
  Server,
  ServerCredentials,
  status,
  type ClientReadableStream,
  type ServiceError,
} from '@grpc/grpc-js';
import { deviceplugin, DEVICE_PLUGIN_API_VERSION, KUBELET_CHECKPOINT_FILE } from '@plugboard/proto';

export interface Registration {
  request: deviceplugin.RegisterRequest;
  /** Options from the dial-back GetDevicePluginOptions call (the ones the kubelet keeps). */
  options: deviceplugin.DevicePluginOptions;
  /** Whether the plugin's socket existed when Register arrived. */
  socketExistedAtRegister: boolean;
  at: number;
}

export interface Endpoint {
  resourceName: string;
  client: deviceplugin.DevicePluginClient;
  stream: ClientReadableStream<deviceplugin.ListAndWatchResponse>;
  /** Every ListAndWatch message received, in order. */
  updates: deviceplugin.Device[][];
}

interface TestKubeletEvents {
  register: [registration: Registration];
  update: [resourceName: string, devices: deviceplugin.Device[]];
}

export class TestKubelet extends EventEmitter<TestKubeletEvents> {
  readonly dir: string;
  readonly socket: string;
  readonly registrations: Registration[] = [];
  readonly endpoints = new Map<string, Endpoint>();
  #server: Server | null = null;
  /** Set to make Register fail with this message (like a kubelet rejecting the request). */
  rejectWith: string | null = null;
  /** false: accept Register but never open ListAndWatch (a kubelet whose dial-back failed). */
  openStreams = true;
  /** Open ListAndWatch this long after answering Register (0: while handling it). */
  streamDelayMs = 0;
  /** Clients of registrations that got no stream. */
  readonly #idle = new Set<deviceplugin.DevicePluginClient>();

  private constructor(dir: string) {
    super();
    this.dir = dir;
    this.socket = join(dir, 'kubelet.sock');
  }

  static async create(options: { start?: boolean } = {}): Promise<TestKubelet> {
    const kubelet = new TestKubelet(await mkdtemp(join(tmpdir(), 'pb-kubelet-')));
    if (options.start ?? true) await kubelet.start();
    return kubelet;
  }

  async start(): Promise<void> {
    const server = new Server();
    const impl: deviceplugin.RegistrationServer = {
      register: (call, callback) => {
        void this.#register(call.request).then(
          () => callback(null, {}),
          (err: Error) => callback({ code: status.UNKNOWN, details: err.message }, null),
        );
      },
    };
    server.addService(deviceplugin.RegistrationService, impl);
    await new Promise<void>((resolve, reject) =>
      server.bindAsync(`unix://${this.socket}`, ServerCredentials.createInsecure(), (err) =>
        err ? reject(err) : resolve(),
      ),
    );
    this.#server = server;
  }

  async #register(request: deviceplugin.RegisterRequest): Promise<void> {
    const socketPath = join(this.dir, request.endpoint);
    const socketExistedAtRegister = await stat(socketPath).then(
      () => true,
      () => false,
    );
    if (this.rejectWith) throw new Error(this.rejectWith);
    if (request.version !== DEVICE_PLUGIN_API_VERSION) throw new Error(`invalid version ${request.version}`);
    const client = new deviceplugin.DevicePluginClient(`unix://${socketPath}`, credentials.createInsecure());
    const options = await new Promise<deviceplugin.DevicePluginOptions>((resolve, reject) =>
      client.getDevicePluginOptions({}, (err: ServiceError | null, res) =>
        err ? reject(err) : resolve(res),
      ),
    ).catch((err: Error) => {
      client.close();
      throw new Error(`failed to dial device plugin: ${err.message}`);
    });
    // Like the device manager: a new registration for the same resource replaces the old endpoint.
    this.#closeEndpoint(request.resourceName);
    const registration: Registration = { request, options, socketExistedAtRegister, at: Date.now() };
    this.registrations.push(registration);
    if (!this.openStreams) {
      this.#idle.add(client);
      this.emit('register', registration);
      return;
    }
    const open = (): void => {
      if (this.#server === null) return client.close();
      const stream = client.listAndWatch({});
      const endpoint: Endpoint = { resourceName: request.resourceName, client, stream, updates: [] };
      stream.on('data', (msg: deviceplugin.ListAndWatchResponse) => {
        endpoint.updates.push(msg.devices);
        this.emit('update', request.resourceName, msg.devices);
      });
      stream.on('error', () => undefined);
      this.endpoints.set(request.resourceName, endpoint);
    };
    if (this.streamDelayMs > 0) setTimeout(open, this.streamDelayMs);
    else open();
    this.emit('register', registration);
  }

  #closeEndpoint(resourceName: string): void {
    const old = this.endpoints.get(resourceName);
    if (!old) return;
    old.stream.cancel();
    old.client.close();
    this.endpoints.delete(resourceName);
  }

  endpoint(resourceName: string): Endpoint {
    const e = this.endpoints.get(resourceName);
    if (!e) throw new Error(`no endpoint for ${resourceName}`);
    return e;
  }

  /** Resolves with the next registration of `resourceName`. */
  async nextRegistration(resourceName: string, timeoutMs = 5000): Promise<Registration> {
    return this.#next('register', (r) => r.request.resourceName === resourceName, timeoutMs);
  }

  /** Resolves with the first ListAndWatch list of `resourceName` (already received or next) matching `predicate`. */
  async waitForDevices(
    resourceName: string,
    predicate: (devices: deviceplugin.Device[]) => boolean,
    timeoutMs = 5000,
  ): Promise<deviceplugin.Device[]> {
    const last = this.endpoints.get(resourceName)?.updates.at(-1);
    if (last && predicate(last)) return last;
    const [, devices] = await this.#nextUpdate(resourceName, predicate, timeoutMs);
    return devices;
  }

  async #nextUpdate(
    resourceName: string,
    predicate: (d: deviceplugin.Device[]) => boolean,
    timeoutMs: number,
  ): Promise<[string, deviceplugin.Device[]]> {
    const signal = AbortSignal.timeout(timeoutMs);
    for (;;) {
      const [name, devices] = (await once(this, 'update', { signal })) as [string, deviceplugin.Device[]];
      if (name === resourceName && predicate(devices)) return [name, devices];
    }
  }

  async #next(
    event: 'register',
    predicate: (r: Registration) => boolean,
    timeoutMs: number,
  ): Promise<Registration> {
    const signal = AbortSignal.timeout(timeoutMs);
    for (;;) {
      const [registration] = (await once(this, event, { signal })) as [Registration];
      if (predicate(registration)) return registration;
    }
  }

  /** Unary call on a registered plugin's endpoint. */
  call<Req, Res>(
    resourceName: string,
    method: 'allocate' | 'getPreferredAllocation' | 'preStartContainer' | 'getDevicePluginOptions',
    request: Req,
  ): Promise<Res> {
    const client = this.endpoint(resourceName).client as unknown as Record<
      string,
      (req: Req, cb: (err: ServiceError | null, res: Res) => void) => void
    >;
    return new Promise((resolve, reject) =>
      client[method]!.call(client, request, (err, res) => (err ? reject(err) : resolve(res))),
    );
  }

  /** What a kubelet does when it starts again: delete every socket, then a new kubelet.sock. */
  async restart(options: { deleteSockets?: boolean; recreateKubeletSocket?: boolean } = {}): Promise<void> {
    await this.stop({ keepDir: true });
    if (options.deleteSockets ?? true) {
      for (const name of await readdir(this.dir)) {
        if (name !== KUBELET_CHECKPOINT_FILE) await unlink(join(this.dir, name)).catch(() => undefined);
      }
    }
    if (options.recreateKubeletSocket ?? true) await this.start();
  }

  /** Drops every ListAndWatch stream (as a kubelet's connections go when it dies), serving on. */
  closeStreams(): void {
    for (const name of [...this.endpoints.keys()]) this.#closeEndpoint(name);
  }

  async stop(options: { keepDir?: boolean } = {}): Promise<void> {
    for (const name of [...this.endpoints.keys()]) this.#closeEndpoint(name);
    for (const client of this.#idle) client.close();
    this.#idle.clear();
    this.#server?.forceShutdown();
    this.#server = null;
    await unlink(this.socket).catch(() => undefined);
    if (!options.keepDir) await rm(this.dir, { recursive: true, force: true });
  }
}

export const ids = (devices: readonly deviceplugin.Device[]): string[] => devices.map((d) => d.ID);
export const healthOf = (devices: readonly deviceplugin.Device[], id: string): string | undefined =>
  devices.find((d) => d.ID === id)?.health;
