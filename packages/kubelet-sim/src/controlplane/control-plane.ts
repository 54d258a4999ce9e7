// startControlPlane: the control-plane loops a DRA node needs, run for this one node against the
// API server's storage — kube-scheduler's scheduling cycle for pods with claims (scheduler.ts,
// cmd/kube-scheduler with pkg/scheduler/framework/plugins/dynamicresources), and two controllers of
// kube-controller-manager: the ResourceClaim controller (resourceclaim-controller.ts,
// pkg/controller/resourceclaim) and device taint eviction (device-taint-eviction.ts,
// pkg/controller/devicetainteviction). It starts after the API server and before the kubelet; the
// kubelet's pod manager calls the scheduler and the claim controller when it takes a pod (the
// simulator admits pods at the kubelet, so it runs their scheduling cycle there), and the eviction
// controller reaches the node's pods through the API server's kubelet connection.

import type { Logger } from 'pino';
import type { EventRecorder } from '../apiserver/events.js';
import type { KubeApiServer } from '../apiserver/kube-apiserver.js';
import {
  DeviceTaintEvictionController,
  DISRUPTION_MESSAGE,
  DISRUPTION_REASON,
} from './device-taint-eviction.js';
import { ResourceClaimController } from './resourceclaim-controller.js';
import { DraScheduler } from './scheduler.js';

export interface ControlPlaneOptions {
  nodeName: string;
  api: KubeApiServer;
  events: EventRecorder;
  logger: Logger;
}

export interface ControlPlane {
  scheduler: DraScheduler;
  claimController: ResourceClaimController;
  stop(): void;
}

export function startControlPlane(o: ControlPlaneOptions): ControlPlane {
  const { api, events, logger } = o;
  const resource = (name: string) => api.storage.store('resource.k8s.io', name);
  const claims = resource('resourceclaims');
  const slices = resource('resourceslices');
  const taintRules = resource('devicetaintrules');
  const templates = resource('resourceclaimtemplates');
  const claimController = new ResourceClaimController({ claims, templates, events, logger });
  const scheduler = new DraScheduler({
    nodeName: o.nodeName,
    nodes: api.storage.store('', 'nodes'),
    claims,
    slices,
    classes: resource('deviceclasses'),
    templates,
    taintRules,
    clock: api.clock,
    logger,
  });
  const evictions = new DeviceTaintEvictionController({
    claims,
    slices,
    taintRules,
    clock: api.clock,
    events,
    pods: () => api.kubelet.current()?.evictionCandidates() ?? [],
    evict: async (namespace, name, uid) =>
      api.kubelet.current()?.evict(namespace, name, uid, DISRUPTION_REASON, DISRUPTION_MESSAGE),
    logger,
  });
  evictions.start();
  return {
    scheduler,
    claimController,
    stop() {
      evictions.stop();
      scheduler.stop();
    },
  };
}
