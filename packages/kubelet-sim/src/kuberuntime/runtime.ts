// The simulated container runtime's identity, as the kubelet learns it from the CRI Version call
// (pkg/kubelet/kuberuntime/kuberuntime_manager.go: runtimeName, and Version for the node status):
// the Node's `nodeInfo.containerRuntimeVersion` is `<name>://<version>` and every container ID
// is `<name>://<id>` (kubecontainer.ContainerID), so both name the same runtime.
import { randomBytes } from 'node:crypto';

export const RUNTIME_NAME = 'plugboard-sim';
export const RUNTIME_VERSION = '0.1.0';
export const CONTAINER_RUNTIME_VERSION = `${RUNTIME_NAME}://${RUNTIME_VERSION}`;

/** A new container's ID, 64 hex digits as containerd's and CRI-O's. */
export function newContainerId(): string {
  return `${RUNTIME_NAME}://${randomBytes(32).toString('hex')}`;
}
