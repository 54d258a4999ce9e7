// A DRA driver written against the raw kubelet APIs (grpc-js + the generated stubs of
// @plugboard/proto) and @kubernetes/client-node, independent of @plugboard/plugin, so the
// simulator is tested against the protocol itself: a pluginregistration server in
// plugins_registry (type DRAPlugin), the DRAPlugin service (v1 or v1beta1) and optionally the
// DRAResourceHealth service (v1 or v1alpha1) on <plugins>/<driver>/dra.sock. It publishes its
// ResourceSlice through the API slice whenever the kubelet tells it it is registered (a restarted
// kubelet deletes the node's slices), and reads each claim's allocation from the API server in
// NodePrepareResources, as real drivers do.

import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  Server,
  ServerCredentials,
  type sendUnaryData,
  type ServerUnaryCall,
  type ServerWritableStream,
  type ServiceError,
} from '@grpc/grpc-js';
import { KubeConfig, ResourceV1Api, type V1ResourceSlice } from '@kubernetes/client-node';
import { drahealthv1, drahealthv1alpha1, drav1, drav1beta1, pluginregistration } from '@plugboard/proto';

export interface TestDraDevice {
  name: string;
  attributes?: Record<string, { string?: string; int?: number; bool?: boolean; version?: string }>;
  taints?: { key: string; value?: string; effect: string; timeAdded?: string }[];
}

export interface TestDraDriverOptions {
  driver: string;
  registryDir: string;
  /** The kubelet's plugins directory: dra.sock goes to <pluginsDir>/<driver>/. */
  pluginsDir: string;
  kubeconfigPath: string;
  nodeName: string;
  devices: TestDraDevice[];
  /** What GetInfo advertises; default v1.DRAPlugin and v1.DRAResourceHealth. */
  supportedVersions?: string[];
  /** Which DRAPlugin version is served (both by default). */
  serve?: ('v1' | 'v1beta1')[];
  /** Which health version is served: none by default unless advertised. */
  health?: 'v1' | 'v1alpha1' | null;
  /** Devices per ResourceSlice (the API allows 128); the pool spans as many slices as needed. */
  devicesPerSlice?: number;
}

type Health = 'HEALTHY' | 'UNHEALTHY' | 'UNKNOWN';

interface PrepareCall {
  service: 'v1' | 'v1beta1';
  claims: drav1.Claim[];
}

export class TestDraDriver {
  readonly draSocket: string;
  readonly registrationSocket: string;
  readonly statuses: pluginregistration.RegistrationStatus[] = [];
  readonly prepareCalls: PrepareCall[] = [];
  readonly unprepareCalls: PrepareCall[] = [];
  /** Per claim name: the error NodePrepareResources reports for it. */
  readonly prepareErrors = new Map<string, string>();
  /** A gRPC error for the whole NodePrepareResources call. */
  prepareCallError: Partial<ServiceError> | null = null;
  devices: TestDraDevice[];
  private readonly health = new Map<string, { health: Health; message: string }>();
  private readonly healthStreams = new Set<ServerWritableStream<unknown, unknown>>();
  private draServer: Server | null = null;
  private regServer: Server | null = null;
  private readonly api: ResourceV1Api;
  private sliceGeneration = 0;
  private publishing: Promise<void> = Promise.resolve();

  constructor(private readonly o: TestDraDriverOptions) {
    this.devices = o.devices;
    this.draSocket = join(o.pluginsDir, o.driver, 'dra.sock');
    this.registrationSocket = join(o.registryDir, `${o.driver}-reg.sock`);
    const kc = new KubeConfig();
    kc.loadFromFile(o.kubeconfigPath);
    this.api = kc.makeApiClient(ResourceV1Api);
  }

  get sliceName(): string {
    return `${this.o.nodeName}-${this.o.driver}`;
  }

  /** CDI device ID of a device: `<vendor>/<class>=<device>`. */
  cdiId(device: string): string {
    return `${this.o.driver}/gpu=${device}`;
  }

  async start(): Promise<void> {
    await this.startDra();
    await this.startRegistration();
  }

  async startDra(): Promise<void> {
    mkdirSync(join(this.o.pluginsDir, this.o.driver), { recursive: true });
    rmSync(this.draSocket, { force: true });
    const server = new Server();
    const serve = this.o.serve ?? ['v1', 'v1beta1'];
    if (serve.includes('v1'))
      server.addService(drav1.DRAPluginService, {
        nodePrepareResources: (call, cb) => void this.prepare('v1', call, cb),
        nodeUnprepareResources: (call, cb) => this.unprepare('v1', call, cb),
      } satisfies drav1.DRAPluginServer);
    if (serve.includes('v1beta1'))
      server.addService(drav1beta1.DRAPluginService, {
        nodePrepareResources: (call, cb) => void this.prepare('v1beta1', call, cb),
        nodeUnprepareResources: (call, cb) => this.unprepare('v1beta1', call, cb),
      } satisfies drav1beta1.DRAPluginServer);
    if (this.o.health === 'v1')
      server.addService(drahealthv1.DRAResourceHealthService, {
        nodeWatchResources: (call) => this.watch(call),
      } satisfies drahealthv1.DRAResourceHealthServer);
    if (this.o.health === 'v1alpha1')
      server.addService(drahealthv1alpha1.DRAResourceHealthService, {
        nodeWatchResources: (call) => this.watch(call),
      } satisfies drahealthv1alpha1.DRAResourceHealthServer);
    await bind(server, this.draSocket);
    this.draServer = server;
  }

  async startRegistration(): Promise<void> {
    mkdirSync(this.o.registryDir, { recursive: true });
    rmSync(this.registrationSocket, { force: true });
    const server = new Server();
    server.addService(pluginregistration.RegistrationService, {
      getInfo: (_call, cb) =>
        cb(null, {
          type: 'DRAPlugin',
          name: this.o.driver,
          endpoint: this.draSocket,
          supportedVersions: this.o.supportedVersions ?? ['v1.DRAPlugin', 'v1.DRAResourceHealth'],
        }),
      notifyRegistrationStatus: (call, cb) => {
        this.statuses.push(call.request);
        // (Re)publish: a restarted kubelet deletes its node's ResourceSlices.
        if (call.request.pluginRegistered) void this.publish();
        cb(null, {});
      },
    } satisfies pluginregistration.RegistrationServer);
    await bind(server, this.registrationSocket);
    this.regServer = server;
  }

  /** Stops serving; the registration socket goes (the kubelet deregisters the driver). */
  stop(): void {
    for (const s of this.healthStreams) s.end();
    this.healthStreams.clear();
    this.regServer?.forceShutdown();
    this.draServer?.forceShutdown();
    this.regServer = null;
    this.draServer = null;
    rmSync(this.registrationSocket, { force: true });
    rmSync(this.draSocket, { force: true });
  }

  /** Creates or replaces the driver's ResourceSlices for the node (a new pool generation). */
  publish(): Promise<void> {
    const run = this.publishing.then(async () => {
      const generation = ++this.sliceGeneration;
      const per = this.o.devicesPerSlice ?? 128;
      const chunks: TestDraDevice[][] = [];
      for (let i = 0; i < Math.max(1, this.devices.length); i += per)
        chunks.push(this.devices.slice(i, i + per));
      for (const [i, chunk] of chunks.entries()) {
        const name = chunks.length === 1 ? this.sliceName : `${this.sliceName}-${i}`;
        const body: V1ResourceSlice = {
          apiVersion: 'resource.k8s.io/v1',
          kind: 'ResourceSlice',
          metadata: { name },
          spec: {
            driver: this.o.driver,
            nodeName: this.o.nodeName,
            pool: { name: this.o.nodeName, generation, resourceSliceCount: chunks.length },
            devices: chunk.map((d) => ({
              name: d.name,
              ...(d.attributes
                ? {
                    attributes: Object.fromEntries(
                      Object.entries(d.attributes).map(([k, v]) => [
                        k,
                        v.int !== undefined ? { _int: v.int } : v,
                      ]),
                    ) as never,
                  }
                : {}),
              ...(d.taints ? { taints: d.taints as never } : {}),
            })),
          },
        };
        try {
          const existing = await this.api.readResourceSlice({ name });
          await this.api.replaceResourceSlice({
            name,
            body: {
              ...body,
              metadata: { ...body.metadata, resourceVersion: existing.metadata?.resourceVersion },
            },
          });
        } catch (err) {
          if ((err as { code?: number }).code !== 404) throw err;
          await this.api.createResourceSlice({ body });
        }
      }
    });
    this.publishing = run.catch(() => undefined);
    return run;
  }

  /** Reports a device's health on every open NodeWatchResources stream (the full list each time). */
  setHealth(device: string, health: Health, message = ''): void {
    this.health.set(device, { health, message });
    for (const s of this.healthStreams) s.write(this.healthList());
  }

  private healthList() {
    return {
      devices: this.devices.map((d) => {
        const h = this.health.get(d.name) ?? { health: 'HEALTHY' as Health, message: '' };
        return {
          device: { poolName: this.o.nodeName, deviceName: d.name },
          health: drahealthv1.HealthStatus[h.health],
          lastUpdatedTime: Math.floor(Date.now() / 1000),
          healthCheckTimeoutSeconds: 0,
          message: h.message,
        };
      }),
    };
  }

  private watch(call: ServerWritableStream<unknown, unknown>): void {
    this.healthStreams.add(call);
    call.on('cancelled', () => this.healthStreams.delete(call));
    call.write(this.healthList());
  }

  private async prepare(
    service: 'v1' | 'v1beta1',
    call: ServerUnaryCall<drav1.NodePrepareResourcesRequest, drav1.NodePrepareResourcesResponse>,
    cb: sendUnaryData<drav1.NodePrepareResourcesResponse>,
  ): Promise<void> {
    this.prepareCalls.push({ service, claims: call.request.claims });
    if (this.prepareCallError) return cb(this.prepareCallError, null);
    const claims: drav1.NodePrepareResourcesResponse['claims'] = {};
    for (const ref of call.request.claims) {
      const error = this.prepareErrors.get(ref.name);
      if (error) {
        claims[ref.uid] = { devices: [], error };
        continue;
      }
      // The request carries only the claim's identity: the allocation comes from the API server.
      const claim = await this.api.readNamespacedResourceClaim({ name: ref.name, namespace: ref.namespace });
      if (claim.metadata?.uid !== ref.uid) {
        claims[ref.uid] = {
          devices: [],
          error: `claim ${ref.name} has UID ${claim.metadata?.uid}, not ${ref.uid}`,
        };
        continue;
      }
      claims[ref.uid] = {
        error: '',
        devices: (claim.status?.allocation?.devices?.results ?? [])
          .filter((r) => r.driver === this.o.driver)
          .map((r) => ({
            requestNames: [r.request],
            poolName: r.pool,
            deviceName: r.device,
            cdiDeviceIds: [this.cdiId(r.device)],
          })),
      };
    }
    cb(null, { claims });
  }

  private unprepare(
    service: 'v1' | 'v1beta1',
    call: ServerUnaryCall<drav1.NodeUnprepareResourcesRequest, drav1.NodeUnprepareResourcesResponse>,
    cb: sendUnaryData<drav1.NodeUnprepareResourcesResponse>,
  ): void {
    this.unprepareCalls.push({ service, claims: call.request.claims });
    cb(null, { claims: Object.fromEntries(call.request.claims.map((c) => [c.uid, { error: '' }])) });
  }
}

function bind(server: Server, socket: string): Promise<void> {
  return new Promise((resolve, reject) =>
    server.bindAsync(`unix://${socket}`, ServerCredentials.createInsecure(), (err) =>
      err ? reject(err) : resolve(),
    ),
  );
}
