// A minimal device plugin written against the raw v1beta1 API (grpc-js + @plugboard/proto),
// independent of @plugboard/plugin, so the simulator is tested against the protocol itself.

import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Server, ServerCredentials, credentials, status, type ServerWritableStream } from '@grpc/grpc-js';
import { deviceplugin, KUBELET_SOCKET_NAME } from '@plugboard/proto';

export interface TestPluginOptions {
  dir: string;
  resourceName: string;
  socketName?: string;
  devices: { id: string; health?: 'Healthy' | 'Unhealthy'; numa?: number[] }[];
  preStartRequired?: boolean;
  getPreferredAllocationAvailable?: boolean;
  /** Picks the preferred devices; default: the last `size` available ones (so it differs from first-fit). */
  preferred?: (req: deviceplugin.ContainerPreferredAllocationRequest) => string[];
}

export class TestPlugin {
  readonly socketPath: string;
  readonly socketName: string;
  devices: deviceplugin.Device[];
  readonly calls = {
    options: 0,
    allocate: [] as string[][],
    preferred: [] as deviceplugin.ContainerPreferredAllocationRequest[],
    preStart: [] as string[][],
  };
  allocateError: string | null = null;
  emptyAllocateResponse = false;
  preStartError: string | null = null;
  private server: Server | null = null;
  private streams = new Set<ServerWritableStream<deviceplugin.Empty, deviceplugin.ListAndWatchResponse>>();

  constructor(private readonly o: TestPluginOptions) {
    this.socketName = o.socketName ?? `${o.resourceName.replace(/[^a-z0-9]+/gi, '-')}.sock`;
    this.socketPath = join(o.dir, this.socketName);
    this.devices = o.devices.map((d) => ({
      ID: d.id,
      health: d.health ?? 'Healthy',
      topology: d.numa ? { nodes: d.numa.map((ID) => ({ ID })) } : undefined,
    }));
  }

  async start(): Promise<void> {
    rmSync(this.socketPath, { force: true });
    const server = new Server();
    const impl: deviceplugin.DevicePluginServer = {
      getDevicePluginOptions: (_call, cb) => {
        this.calls.options++;
        cb(null, {
          preStartRequired: !!this.o.preStartRequired,
          getPreferredAllocationAvailable: !!this.o.getPreferredAllocationAvailable,
        });
      },
      listAndWatch: (call) => {
        this.streams.add(call);
        call.on('cancelled', () => this.streams.delete(call));
        call.write({ devices: this.devices });
      },
      getPreferredAllocation: (call, cb) => {
        const req = call.request.containerRequests[0]!;
        this.calls.preferred.push(req);
        const pick =
          this.o.preferred ??
          ((r) =>
            [
              ...r.mustIncludeDeviceIDs,
              ...r.availableDeviceIDs.filter((id) => !r.mustIncludeDeviceIDs.includes(id)).reverse(),
            ].slice(0, r.allocationSize));
        cb(null, { containerResponses: [{ deviceIDs: pick(req) }] });
      },
      allocate: (call, cb) => {
        const ids = call.request.containerRequests[0]?.devicesIds ?? [];
        this.calls.allocate.push(ids);
        if (this.allocateError)
          return cb({ code: status.INVALID_ARGUMENT, details: this.allocateError }, null);
        if (this.emptyAllocateResponse) return cb(null, { containerResponses: [] });
        cb(null, {
          containerResponses: [
            {
              envs: { TEST_DEVICES: ids.join(',') },
              mounts: [],
              devices: [],
              annotations: {},
              cdiDevices: [],
            },
          ],
        });
      },
      preStartContainer: (call, cb) => {
        this.calls.preStart.push(call.request.devicesIds);
        if (this.preStartError) return cb({ code: status.INTERNAL, details: this.preStartError }, null);
        cb(null, {});
      },
    };
    server.addService(deviceplugin.DevicePluginService, impl);
    await new Promise<void>((resolve, reject) =>
      server.bindAsync(`unix://${this.socketPath}`, ServerCredentials.createInsecure(), (err) =>
        err ? reject(err) : resolve(),
      ),
    );
    this.server = server;
  }

  /** Calls the kubelet's Register; overrides let tests send bad requests. */
  register(overrides: Partial<deviceplugin.RegisterRequest> = {}): Promise<void> {
    const client = new deviceplugin.RegistrationClient(
      `unix://${join(this.o.dir, KUBELET_SOCKET_NAME)}`,
      credentials.createInsecure(),
    );
    const req: deviceplugin.RegisterRequest = {
      version: 'v1beta1',
      endpoint: this.socketName,
      resourceName: this.o.resourceName,
      options: {
        preStartRequired: !!this.o.preStartRequired,
        getPreferredAllocationAvailable: !!this.o.getPreferredAllocationAvailable,
      },
      ...overrides,
    };
    return new Promise<void>((resolve, reject) => {
      client.register(req, (err) => {
        client.close();
        if (err) reject(err);
        else resolve();
      });
    });
  }

  setHealth(id: string, health: 'Healthy' | 'Unhealthy'): void {
    this.devices = this.devices.map((d) => (d.ID === id ? { ...d, health } : d));
    for (const s of this.streams) s.write({ devices: this.devices });
  }

  /** Ends ListAndWatch streams and stops serving (the plugin process "dies"). */
  stop(): Promise<void> {
    for (const s of this.streams) s.end();
    this.streams.clear();
    this.server?.forceShutdown();
    this.server = null;
    rmSync(this.socketPath, { force: true });
    return Promise.resolve();
  }
}
