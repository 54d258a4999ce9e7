// The Pod object the kubelet reports for a simulated pod (pkg/kubelet/kubelet_pods.go
// generateAPIPodStatus and convertToAPIContainerStatuses, the status manager's conditions;
// release-1.33): phase, conditions with their transition times, IPs, QoS class, init and app
// container statuses with state, lastState, restartCount and allocatedResourcesStatus (the
// ResourceHealthStatus feature: each allocated device's health as ListAndWatch last reported it,
// and for DRA claims `claim:<claim>[/<request>]` entries from the DRA manager's health cache).
// A pod the scheduler could not place is Pending with PodScheduled False and nothing else; one
// whose claims are not prepared yet has no sandbox (PodReadyToStartContainers False).

import type { DeviceManager } from '../cm/devicemanager/manager.js';
import { kubeTime } from '../util/kube-time.js';
import {
  isTerminal,
  type AdmittedPod,
  type ContainerRuntime,
  type ContainerState,
  type PodRuntime,
  type ResourceStatus,
  type Terminated,
} from './runtime.js';

function condition(
  pod: PodRuntime,
  type: string,
  ok: boolean,
  reason?: string,
  message?: string,
): Record<string, unknown> {
  const status = ok ? 'True' : 'False';
  const prev = pod.conditions.get(type);
  const time = prev && prev.status === status ? prev.time : new Date();
  pod.conditions.set(type, { status, time });
  return {
    type,
    status,
    lastProbeTime: null,
    lastTransitionTime: kubeTime(time),
    ...(reason ? { reason } : {}),
    ...(message ? { message } : {}),
  };
}

/** The DRA manager's allocatedResourcesStatus entries of one (app) container. */
export type DraResourceStatusFn = (pod: PodRuntime, c: ContainerRuntime) => ResourceStatus[];

/** The Pod object as the API serves it. */
export function renderPod(
  pod: PodRuntime,
  hostIp: string,
  devices: DeviceManager,
  dra?: DraResourceStatusFn,
): AdmittedPod {
  const { spec } = pod;
  const status: Record<string, unknown> = { phase: pod.phase };
  const claimStatuses = {
    ...(pod.resourceClaimStatuses.length ? { resourceClaimStatuses: pod.resourceClaimStatuses } : {}),
    ...(pod.extendedResourceClaimStatus
      ? { extendedResourceClaimStatus: pod.extendedResourceClaimStatus }
      : {}),
  };
  if (pod.unschedulable) {
    // Not bound: no nodeName (unless the pod named one), no IPs, no container statuses.
    status['conditions'] = [
      condition(pod, 'PodScheduled', false, pod.unschedulable.reason, pod.unschedulable.message),
    ];
    Object.assign(status, { qosClass: pod.qos, ...claimStatuses });
    const rawSpec = { ...spec.rawSpec };
    if (spec.requestedNodeName === null) delete rawSpec['nodeName'];
    return podObject(pod, rawSpec, status);
  }
  if (pod.rejected) {
    Object.assign(status, {
      reason: pod.reason,
      message: pod.message,
      startTime: kubeTime(pod.createdAt),
      qosClass: pod.qos,
    });
  } else {
    const unready = pod.app.filter((c) => c.state.kind !== 'running').map((c) => c.spec.name);
    const uninit = pod.init.filter(
      (c) =>
        !(c.state.kind === 'terminated' && c.state.exitCode === 0) &&
        !(c.spec.sidecar && c.state.kind === 'running'),
    );
    const ready = unready.length === 0;
    const done = isTerminal(pod);
    status['conditions'] = [
      // The real kubelet 1.37.2 gives the False condition the reason PodSandboxNotReady (measured by
      // the fidelity scenario dra-prepare-failure).
      condition(
        pod,
        'PodReadyToStartContainers',
        pod.sandboxReady && !done,
        pod.sandboxReady && !done ? undefined : 'PodSandboxNotReady',
      ),
      condition(
        pod,
        'Initialized',
        pod.initDone,
        pod.initDone ? undefined : 'ContainersNotInitialized',
        pod.initDone
          ? undefined
          : `containers with incomplete status: [${uninit.map((c) => c.spec.name).join(' ')}]`,
      ),
      condition(
        pod,
        'Ready',
        ready,
        ready ? undefined : done ? 'PodCompleted' : 'ContainersNotReady',
        ready || done ? undefined : `containers with unready status: [${unready.join(' ')}]`,
      ),
      condition(
        pod,
        'ContainersReady',
        ready,
        ready ? undefined : done ? 'PodCompleted' : 'ContainersNotReady',
        ready || done ? undefined : `containers with unready status: [${unready.join(' ')}]`,
      ),
      condition(pod, 'PodScheduled', true),
      // A controller's condition, patched in after the kubelet's own.
      ...(pod.disruption
        ? [condition(pod, 'DisruptionTarget', true, pod.disruption.reason, pod.disruption.message)]
        : []),
    ];
    Object.assign(status, {
      hostIP: hostIp,
      hostIPs: [{ ip: hostIp }],
      podIP: pod.podIp,
      podIPs: [{ ip: pod.podIp }],
      startTime: kubeTime(pod.startTime ?? pod.createdAt),
      ...(pod.init.length
        ? { initContainerStatuses: pod.init.map((c) => containerStatus(pod, c, devices)) }
        : {}),
      containerStatuses: pod.app.map((c) => containerStatus(pod, c, devices, dra)),
      qosClass: pod.qos,
      ...claimStatuses,
    });
  }
  return podObject(pod, spec.rawSpec, status);
}

function podObject(
  pod: PodRuntime,
  rawSpec: Record<string, unknown>,
  status: Record<string, unknown>,
): AdmittedPod {
  const { spec } = pod;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: spec.name,
      namespace: spec.namespace,
      uid: spec.uid,
      creationTimestamp: kubeTime(pod.createdAt),
      ...(Object.keys(spec.labels).length ? { labels: spec.labels } : {}),
      ...(Object.keys(spec.annotations).length ? { annotations: spec.annotations } : {}),
    },
    spec: rawSpec,
    status,
  };
}

/**
 * Per resource, the health of each allocated device (the ResourceHealthStatus feature): the device
 * manager's entries, then (app containers only, as UpdateAllocatedResourcesStatus walks
 * containerStatuses) the DRA manager's.
 */
export function resourceStatus(
  pod: PodRuntime,
  c: ContainerRuntime,
  devices: DeviceManager,
  dra?: DraResourceStatusFn,
): ResourceStatus[] {
  const frozen = pod.finalResourceStatus?.get(c.spec.name);
  if (frozen) return frozen;
  const plugin = devices.containerAllocations(pod.spec.uid, c.spec.name).map((a) => ({
    name: a.resource,
    resources: a.deviceIds.map((id) => ({
      resourceID: id,
      health: devices.deviceHealth(a.resource, id),
    })),
  }));
  return dra && !c.spec.init && c.spec.claims.length ? [...plugin, ...dra(pod, c)] : plugin;
}

function containerStatus(
  pod: PodRuntime,
  c: ContainerRuntime,
  devices: DeviceManager,
  dra?: DraResourceStatusFn,
): Record<string, unknown> {
  const image = String(c.spec.raw['image']);
  const allocated = resourceStatus(pod, c, devices, dra);
  return {
    name: c.spec.name,
    state: renderState(c.state),
    lastState: c.lastTerminated ? { terminated: renderTerminated(c.lastTerminated) } : {},
    ready: c.state.kind === 'running' && !c.spec.init,
    restartCount: c.restartCount,
    image,
    imageID: `${image.split(':')[0]}@sha256:${'0'.repeat(64)}`,
    ...(c.containerId ? { containerID: c.containerId } : {}),
    started: c.state.kind === 'running',
    ...(allocated.length ? { allocatedResourcesStatus: allocated } : {}),
  };
}

function renderTerminated(t: Terminated): Record<string, unknown> {
  return {
    exitCode: t.exitCode,
    reason: t.reason,
    ...(t.message ? { message: t.message } : {}),
    startedAt: kubeTime(t.startedAt),
    finishedAt: kubeTime(t.finishedAt),
    containerID: t.containerId,
  };
}

function renderState(s: ContainerState): Record<string, unknown> {
  if (s.kind === 'running') return { running: { startedAt: kubeTime(s.startedAt) } };
  if (s.kind === 'waiting')
    return { waiting: { reason: s.reason, ...(s.message ? { message: s.message } : {}) } };
  return { terminated: renderTerminated(s) };
}
