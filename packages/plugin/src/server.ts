// The DevicePlugin gRPC service of one resource. Transport only: device state, policy and the
// response template live elsewhere; PluginErrors become gRPC statuses here, once.
import type { Logger } from 'pino';
import type { ServerWritableStream } from '@grpc/grpc-js';
import { deviceplugin } from '@plugboard/proto';
import { newServer, unaryHandler, type UnaryHandler } from './grpc-status.js';
import { PluginError } from './errors.js';
import type { DeviceState } from './device-state.js';
import { preferredAllocation } from './allocation/preferred.js';
import { validateAllocation, validatePreferredRequest } from './allocation/validate.js';
import type { AllocateResponseBuilder } from './allocation/response.js';
import type { PluginDevice, PreferredAllocationDecision, ResourcePluginEvents } from './types.js';
import type { Server } from '@grpc/grpc-js';

/** ListAndWatch answers are encoded once per device-list version and written as bytes to every stream. */
const preEncodedService = {
  ...deviceplugin.DevicePluginService,
  listAndWatch: {
    ...deviceplugin.DevicePluginService.listAndWatch,
    responseSerialize: (value: Buffer): Buffer => value,
  },
};

/** Proto form per device object: DeviceState keeps unchanged devices as the same objects. */
const protoDevices = new WeakMap<PluginDevice, deviceplugin.Device>();

function toProtoDevice(d: PluginDevice): deviceplugin.Device {
  let proto = protoDevices.get(d);
  if (!proto) {
    proto = {
      ID: d.id,
      health: d.health,
      topology: d.numaNodes.length ? { nodes: d.numaNodes.map((ID) => ({ ID })) } : undefined,
    };
    protoDevices.set(d, proto);
  }
  return proto;
}

interface Stream {
  call: ServerWritableStream<unknown, Buffer>;
  /** Registration generation the stream was opened under (older streams closing are expected). */
  generation: number;
  sentVersion: number;
  blocked: boolean;
  openedAt: number;
}

/** The ListAndWatch message of a device list. */
function encodeListAndWatch(devices: readonly PluginDevice[]): Buffer {
  return Buffer.from(
    deviceplugin.ListAndWatchResponse.encode({ devices: devices.map(toProtoDevice) }).finish(),
  );
}

/**
 * Fan-out of full device lists to every open ListAndWatch stream, coalescing bursts. `encode` turns
 * a list into the message bytes (once per list version, for all streams); the DRA side uses this
 * same fan-out for its NodeWatchResources health streams with its own encoder.
 */
export class ListAndWatchStreams {
  readonly #state: DeviceState;
  readonly #streams = new Set<Stream>();
  readonly #onSend: () => void;
  readonly #onClosed: (generation: number, remaining: number, durationMs: number) => void;
  readonly #onOpened: (generation: number) => void;
  readonly #encode: (devices: readonly PluginDevice[]) => Buffer;
  #encoded: { version: number; bytes: Buffer } | null = null;
  #scheduled = false;
  #reported: readonly PluginDevice[] | null = null;

  constructor(
    state: DeviceState,
    onSend: () => void,
    onClosed: (generation: number, remaining: number, durationMs: number) => void,
    onOpened: (generation: number) => void,
    encode: (devices: readonly PluginDevice[]) => Buffer = encodeListAndWatch,
  ) {
    this.#state = state;
    this.#onSend = onSend;
    this.#onClosed = onClosed;
    this.#onOpened = onOpened;
    this.#encode = encode;
  }

  get size(): number {
    return this.#streams.size;
  }

  #bytes(): Buffer {
    const version = this.#state.version;
    if (this.#encoded?.version !== version) {
      this.#encoded = { version, bytes: this.#encode(this.#state.devices()) };
    }
    return this.#encoded.bytes;
  }

  add(call: Stream['call'], generation: number): void {
    const stream: Stream = { call, generation, sentVersion: -1, blocked: false, openedAt: performance.now() };
    this.#streams.add(stream);
    const remove = (): void => {
      if (this.#streams.delete(stream)) {
        this.#onClosed(stream.generation, this.#streams.size, performance.now() - stream.openedAt);
      }
    };
    call.on('cancelled', remove);
    call.on('close', remove);
    call.on('error', remove);
    if (this.#write(stream)) this.#sent();
    this.#onOpened(generation);
  }

  /** Sends the current list to every stream when this synchronous block ends (one list per block). */
  schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    // A microtask, not setImmediate: changes made in one synchronous block still go out as one
    // list, without waiting behind the event loop's pending I/O callbacks.
    queueMicrotask(() => {
      this.#scheduled = false;
      let wrote = false;
      for (const stream of this.#streams) wrote = this.#write(stream) || wrote;
      if (wrote) this.#sent();
    });
  }

  /**
   * Encodes the current list again and sends it to every stream even if unchanged: a heartbeat for
   * consumers that expire what they were told (the kubelet's DRA health cache does).
   */
  resend(): void {
    this.#encoded = null;
    for (const stream of this.#streams) stream.sentVersion = -1;
    this.schedule();
  }

  /**
   * The device list the kubelet was last told on an open stream (the health it acts on), or null
   * while no stream is open: then the kubelet holds nothing of ours.
   */
  reported(): readonly PluginDevice[] | null {
    return this.#streams.size > 0 ? this.#reported : null;
  }

  #sent(): void {
    this.#reported = this.#state.devices();
    this.#onSend();
  }

  /** Writes the current list to one stream unless it has it already; true when written. */
  #write(stream: Stream): boolean {
    const version = this.#state.version;
    if (stream.blocked || stream.sentVersion === version) return false;
    stream.sentVersion = version;
    const ok = stream.call.write(this.#bytes());
    if (!ok) {
      // Slow reader: skip intermediate lists and send the newest one once it drains.
      stream.blocked = true;
      stream.call.once('drain', () => {
        stream.blocked = false;
        if (this.#write(stream)) this.#sent();
      });
    }
    return true;
  }

  endAll(): void {
    const streams = [...this.#streams];
    this.#streams.clear();
    for (const s of streams) s.call.end();
  }
}

export interface DevicePluginServiceDeps {
  resourceName: string;
  options: deviceplugin.DevicePluginOptions;
  state: DeviceState;
  streams: ListAndWatchStreams;
  generation: () => number;
  buildResponse: AllocateResponseBuilder;
  failRequestsGreaterThanOne: boolean;
  preStart: ((deviceIds: string[]) => Promise<void>) | null;
  onPreferred: (decision: PreferredAllocationDecision) => void;
  onAllocate: (event: ResourcePluginEvents['allocate'][0]) => void;
  logger: Logger;
}

export function devicePluginServer(deps: DevicePluginServiceDeps): Server {
  const { state, logger } = deps;
  const unary = <Req, Res>(
    rpc: string,
    handle: (request: Req) => Res | Promise<Res>,
    after?: (request: Req, ms: number, err: unknown) => void,
  ): UnaryHandler<Req, Res> => unaryHandler(logger, rpc, handle, after);

  const impl: deviceplugin.DevicePluginServer = {
    getDevicePluginOptions: unary('GetDevicePluginOptions', () => deps.options),

    listAndWatch: (call) => {
      logger.info({ rpc: 'ListAndWatch', streams: deps.streams.size + 1 }, 'stream opened');
      deps.streams.add(
        call as unknown as ServerWritableStream<deviceplugin.Empty, Buffer>,
        deps.generation(),
      );
    },

    getPreferredAllocation: unary(
      'GetPreferredAllocation',
      (request: deviceplugin.PreferredAllocationRequest) => ({
        containerResponses: request.containerRequests.map((c) => {
          validatePreferredRequest(c.availableDeviceIDs, c.mustIncludeDeviceIDs, (id) => state.get(id));
          const numaNodesOf = (id: string): readonly number[] => state.get(id)?.numaNodes ?? [];
          const started = performance.now();
          const { chosen, reason } = preferredAllocation({
            available: c.availableDeviceIDs,
            mustInclude: c.mustIncludeDeviceIDs,
            size: c.allocationSize,
            numaNodesOf,
          });
          deps.onPreferred({
            at: new Date().toISOString(),
            available: c.availableDeviceIDs,
            mustInclude: c.mustIncludeDeviceIDs,
            size: c.allocationSize,
            chosen,
            reason,
            durationMs: performance.now() - started,
          });
          return { deviceIDs: chosen };
        }),
      }),
    ),

    allocate: unary(
      'Allocate',
      (request: deviceplugin.AllocateRequest) => {
        const perContainer = validateAllocation(
          request.containerRequests.map((c) => c.devicesIds),
          { lookup: (id) => state.get(id), failRequestsGreaterThanOne: deps.failRequestsGreaterThanOne },
        );
        return { containerResponses: perContainer.map(deps.buildResponse) };
      },
      (request, durationMs, err) =>
        deps.onAllocate({
          deviceIds: request.containerRequests.map((c) => c.devicesIds),
          durationMs,
          ok: err === null,
          ...(err === null ? {} : { error: PluginError.from(err).message }),
        }),
    ),

    preStartContainer: unary('PreStartContainer', async (request: deviceplugin.PreStartContainerRequest) => {
      if (deps.preStart) {
        validateAllocation([request.devicesIds], {
          lookup: (id) => state.get(id),
          allowUnhealthy: true,
          rpc: 'PreStartContainer',
        });
        await deps.preStart(request.devicesIds);
      }
      return {};
    }),
  };

  const server = newServer();
  server.addService(preEncodedService, impl);
  return server;
}
