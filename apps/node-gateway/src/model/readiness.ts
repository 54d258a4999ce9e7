// What GET /readyz answers, from the resources' registration state (docs/API.md#readiness-get-readyz).
//
// Ready once every plugin has registered with the kubelet since the gateway started, and none has
// failed or stopped. A plugin the kubelet let go of (`waiting-for-kubelet`, or registering again after
// a kubelet restart) does not make the gateway unready: the kubelet runs the readiness probe, so
// while it is down nobody probes, and once it is back the plugin re-registers within milliseconds;
// failing then would only flap the pod's Ready condition (DaemonSet rollouts count it unavailable,
// `kubectl get pods` points at the gateway rather than the kubelet) while the gateway is serving
// exactly the view an operator needs. The detail names such plugins, and
// plugboard_device_plugin_registered (alert PlugboardDevicePluginNotRegistered) reports them.
// The DRA drivers the gateway runs count the same way (their registration through the plugin
// watcher, plugboard_dra_driver_registered).
import type { DraDriverState, ResourceState } from '@plugboard/api';

export interface Readiness {
  ready: boolean;
  detail: string;
}

function describe(r: ResourceState): string {
  const reg = r.registration;
  const since = reg.phase === 'waiting-for-kubelet' && reg.waitingSince ? ` since ${reg.waitingSince}` : '';
  return `${r.name} (${reg.phase}${since}${reg.error ? `: ${reg.error}` : ''})`;
}

function describeDriver(d: DraDriverState): string {
  const reg = d.registration!;
  return `DRA driver ${d.name} (${reg.phase}${reg.error ? `: ${reg.error}` : ''})`;
}

/** `drivers`: the in-process DRA drivers (those with a `registration`); others are ignored. */
export function readiness(
  resources: readonly ResourceState[],
  drivers: readonly DraDriverState[] = [],
): Readiness {
  const own = drivers.filter((d) => d.registration !== null);
  const down = (phase: string, registeredAt: string | null): boolean =>
    registeredAt === null || phase === 'failed' || phase === 'stopped';
  const notReady = [
    ...resources.filter((r) => down(r.registration.phase, r.registration.registeredAt)).map(describe),
    ...own.filter((d) => down(d.registration!.phase, d.registration!.registeredAt)).map(describeDriver),
  ];
  if (notReady.length > 0) {
    return { ready: false, detail: `not registered with the kubelet: ${notReady.join(', ')}` };
  }
  const away = [
    ...resources.filter((r) => r.registration.phase !== 'registered').map(describe),
    ...own.filter((d) => d.registration!.phase !== 'registered').map(describeDriver),
  ];
  if (away.length > 0) {
    return {
      ready: true,
      detail: `ready; not held by the kubelet right now, re-registering when it is back: ${away.join(', ')}`,
    };
  }
  return { ready: true, detail: 'all plugins registered with the kubelet' };
}
