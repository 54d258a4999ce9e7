// The kubelet's PodResources v1 server (pkg/kubelet/apis/podresources server_v1.go and
// server.go's serving on a Unix socket, release-1.33): `v1.PodResourcesLister` with List (active
// pods with devices per NUMA node, exclusive CPUs, pinned memory, DRA claims as
// containerManagerImpl.GetDynamicResources reports them), GetAllocatableResources
// (healthy devices only, node CPUs and memory) and Get (the kubelet's "pod X in namespace Y not
// found"), behind the token-bucket rate limit of grpc/ratelimit.ts (100 qps, burst 10;
// RESOURCE_EXHAUSTED "rejected by rate limit").

import { rmSync } from 'node:fs';
import { Server, status, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { routeConnection } from '@plugboard/grpc-authority';
import { bindUnixServer, closeUnixServer, podresources } from '@plugboard/proto';
import { NODE_WITHOUT_TOPOLOGY, type CpuManager, type MemoryManager } from '@plugboard/topology';
import type { DeviceManager } from '../../cm/devicemanager/manager.js';
import type { DraManager } from '../../cm/dra/manager.js';
import type { DraPod } from '../../cm/dra/types.js';
import { unknownStatus } from '../../util/grpc-errors.js';
import type { PodManager } from '../../pods/pod-manager.js';
import type { ContainerSpec, PodSpec } from '../../pods/pod-spec.js';
import { TokenBucket, type RateLimit } from './grpc/ratelimit.js';

export interface PodResourcesServerOptions {
  socketPath: string;
  deviceManager: DeviceManager;
  cpuManager: CpuManager;
  memoryManager: MemoryManager;
  pods: PodManager;
  /** The DRA manager: each container's `dynamic_resources` (none without it). */
  dra?: DraManager;
  rateLimit: RateLimit | false;
  logger: Logger;
}

const topology = (numa: number): podresources.TopologyInfo | undefined =>
  numa === NODE_WITHOUT_TOPOLOGY ? undefined : { nodes: [{ ID: numa }] };

/** A memory block's group: every NUMA node it was allocated from (containerMemoryFromBlock). */
const groupTopology = (nodes: number[]): podresources.TopologyInfo => ({
  nodes: nodes.map((ID) => ({ ID })),
});

export class PodResourcesServer {
  private server: Server | null = null;
  private limiter: TokenBucket | null = null;
  private readonly log: Logger;

  constructor(private readonly o: PodResourcesServerOptions) {
    this.log = o.logger.child({ component: 'pod-resources' });
  }

  get socketPath(): string {
    return this.o.socketPath;
  }

  async start(): Promise<void> {
    this.limiter = this.o.rateLimit ? new TokenBucket(this.o.rateLimit) : null;
    const server = new Server();
    const impl: podresources.PodResourcesListerServer = {
      list: this.limited('List', () => ({
        podResources: this.o.pods.activePods().map((p) => this.podResources(p.spec, p.containers, p.dra)),
      })),
      getAllocatableResources: this.limited('GetAllocatableResources', () => this.allocatable()),
      get: this.limited('Get', (req: podresources.GetPodResourcesRequest) => {
        const pod = this.o.pods.findPod(req.podNamespace, req.podName);
        if (!pod) throw new Error(`pod ${req.podName} in namespace ${req.podNamespace} not found`);
        return { podResources: this.podResources(pod.spec, pod.containers, pod.dra) };
      }),
    };
    server.addService(podresources.PodResourcesListerService, impl);
    // Any gRPC stack's client, as with a grpc-go server: a raw socket path as :authority too.
    await bindUnixServer(server, this.o.socketPath, { directoryMode: 0o750, log: this.log, routeConnection });
    this.server = server;
    this.log.info(
      { socket: this.o.socketPath, rateLimit: this.o.rateLimit },
      'PodResources server listening',
    );
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) await closeUnixServer(server, this.o.socketPath);
    else rmSync(this.o.socketPath, { force: true });
  }

  /** A unary handler behind the rate limiter; thrown Go-style errors become status UNKNOWN. */
  private limited<Req, Res>(rpc: string, handler: (req: Req) => Res) {
    return (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>): void => {
      if (this.limiter && !this.limiter.allow()) {
        callback(
          {
            code: status.RESOURCE_EXHAUSTED,
            details: 'rejected by rate limit',
            message: 'rejected by rate limit',
          },
          null,
        );
        return;
      }
      try {
        callback(null, handler(call.request));
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        this.log.debug({ rpc, err: message }, 'PodResources call failed');
        callback(unknownStatus(message), null);
      }
    };
  }

  private podResources(pod: PodSpec, containers: ContainerSpec[], dra: DraPod): podresources.PodResources {
    return {
      name: pod.name,
      namespace: pod.namespace,
      // Pod-level exclusive CPUs and memory (KEP-5526, PodLevelResourceManagers, alpha and off by
      // default): kubelet-sim's managers allocate per container only, so — like a kubelet with the
      // gate off — the pod-level lists stay empty.
      cpuIds: [],
      memory: [],
      containers: containers.map((c) => {
        return {
          name: c.name,
          devices: this.o.deviceManager.containerAllocations(pod.uid, c.name).flatMap((a) =>
            [...a.byNuma].map(([numa, ids]) => ({
              resourceName: a.resource,
              deviceIds: ids,
              topology: topology(numa),
            })),
          ),
          cpuIds: this.o.cpuManager.cpusOf(pod.uid, c.name),
          memory: this.o.memoryManager.blocksOf(pod.uid, c.name).map((m) => ({
            memoryType: m.type,
            size: m.bytes,
            topology: groupTopology(m.numaNodes),
          })),
          dynamicResources: this.o.dra ? this.o.dra.dynamicResources(dra, c) : [],
        };
      }),
    };
  }

  private allocatable(): podresources.AllocatableResourcesResponse {
    return {
      // One entry per device and NUMA node, as the kubelet's containerDevicesFromResourceDeviceInstances.
      devices: this.o.deviceManager.allocatableDevices().flatMap(({ resource, device }) =>
        (device.numaNodes.length ? device.numaNodes : [NODE_WITHOUT_TOPOLOGY]).map((numa) => ({
          resourceName: resource,
          deviceIds: [device.id],
          topology: topology(numa),
        })),
      ),
      cpuIds: this.o.cpuManager.allocatableCpus(),
      memory: this.o.memoryManager
        .allocatableMemory()
        .map((m) => ({ memoryType: m.type, size: m.bytes, topology: topology(m.numaNode) })),
    };
  }
}
