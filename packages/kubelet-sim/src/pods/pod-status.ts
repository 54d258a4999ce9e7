// The Pod object the kubelet reports for a simulated pod (pkg/kubelet/kubelet_pods.go
// generateAPIPodStatus and convertToAPIContainerStatuses, the status manager's conditions;
// release-1.33): phase, conditions with their transition times, IPs, QoS class, init and app
// container statuses with state, lastState, restartCount and allocatedResourcesStatus (the
// ResourceHealthStatus feature: each allocated device's health as ListAndWatch last reported it).

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

/** The Pod object as the API serves it. */
export function renderPod(pod: PodRuntime, hostIp: string, devices: DeviceManager): AdmittedPod {
  const { spec } = pod;
  const status: Record<string, unknown> = { phase: pod.phase };
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
      condition(pod, 'PodReadyToStartContainers', !done),
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
      containerStatuses: pod.app.map((c) => containerStatus(pod, c, devices)),
      qosClass: pod.qos,
    });
  }
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
    spec: spec.rawSpec,
    status,
  };
}

/** Per resource, the health of each allocated device (the ResourceHealthStatus feature). */
export function resourceStatus(
  pod: PodRuntime,
  c: ContainerRuntime,
  devices: DeviceManager,
): ResourceStatus[] {
  const frozen = pod.finalResourceStatus?.get(c.spec.name);
  if (frozen) return frozen;
  return devices.containerAllocations(pod.spec.uid, c.spec.name).map((a) => ({
    name: a.resource,
    resources: a.deviceIds.map((id) => ({
      resourceID: id,
      health: devices.deviceHealth(a.resource, id),
    })),
  }));
}

function containerStatus(
  pod: PodRuntime,
  c: ContainerRuntime,
  devices: DeviceManager,
): Record<string, unknown> {
  const image = String(c.spec.raw['image']);
  const allocated = resourceStatus(pod, c, devices);
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
