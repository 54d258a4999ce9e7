// The strategies of the resource.k8s.io/v1 kinds, as kube-apiserver's registry has them
// (pkg/registry/resource/<kind>/strategy.go and storage/storage.go, release-1.37), with the
// defaulting their requests get when they are decoded (pkg/apis/resource/v1/defaults.go). Every kind
// is validated (../validation/resource.ts). Every device taint a write leaves without timeAdded gets
// the current second (SetDefaults_DeviceTaint), a ResourceSlice's devices' taints as a
// DeviceTaintRule's. A DeviceTaintRule also gets PrepareForUpdate's bump when the effect changes,
// refuses updates without a resourceVersion (AllowUnconditionalUpdate is false from v1 on) and
// answers a delete with a Status (NewRESTv1: returnDeletedObject false).

import { kubeTime } from '../../util/kube-time.js';
import type { KubeObject } from '../object-store.js';
import { storeKey } from '../resources.js';
import type { RestStrategy, Validator } from '../rest-storage.js';
import { resourceValidators, type SelectorCompiler } from '../validation/resource.js';

type Obj = Record<string, unknown>;
const asObj = (v: unknown): Obj =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {};

const DEVICE_TAINT_RULES = storeKey('resource.k8s.io', 'devicetaintrules');
const RESOURCE_SLICES = storeKey('resource.k8s.io', 'resourceslices');
const RESOURCE_CLAIMS = storeKey('resource.k8s.io', 'resourceclaims');

/** The strategies of the resource.k8s.io kinds, keyed as the API server's stores are. */
export function resourceStrategies(compile?: SelectorCompiler): ReadonlyMap<string, RestStrategy> {
  return new Map(
    [...resourceValidators(compile)].map(([key, validate]): [string, RestStrategy] => [
      key,
      key === DEVICE_TAINT_RULES
        ? deviceTaintRuleStrategy(validate)
        : key === RESOURCE_SLICES
          ? resourceSliceStrategy(validate)
          : key === RESOURCE_CLAIMS
            ? { validate, prepareForStatusUpdate: (obj, old) => dropDeallocatedStatusDevices(obj, old) }
            : { validate },
    ]),
  );
}

/** The rule with `spec.taint` replaced (the spec may be shared with the stored object: never mutated). */
function withTaint(obj: KubeObject, taint: Obj): void {
  obj['spec'] = { ...asObj(obj['spec']), taint };
}

/**
 * A taint's timeAdded as the API server stores it: the current second when left out
 * (SetDefaults_DeviceTaint), else the given time as metav1.Time encodes it — RFC 3339 in UTC, the
 * fraction dropped (a client sending `…:01.234Z` reads back `…:01Z`). A time that does not parse is
 * kept for validation to refuse. `undefined` when nothing changes.
 */
function storedTimeAdded(taint: unknown, now: string): string | undefined {
  const t = asObj(taint)['timeAdded'];
  if (t === undefined || t === null) return now;
  if (typeof t !== 'string' || Number.isNaN(Date.parse(t))) return undefined;
  const whole = kubeTime(new Date(Math.floor(Date.parse(t) / 1000) * 1000));
  return whole === t ? undefined : whole;
}

/** The rule's taint with its stored timeAdded. */
function defaultTimeAdded(obj: KubeObject, now: string): void {
  const taint = asObj(asObj(obj['spec'])['taint']);
  const timeAdded = storedTimeAdded(taint, now);
  if (timeAdded !== undefined) withTaint(obj, { ...taint, timeAdded });
}

/**
 * storedTimeAdded on every taint of the slice's devices (SetDefaults_DeviceTaint, metav1.Time's
 * encoding). The spec, its device list and the
 * devices may be shared with the stored object (a patch leaves what it does not touch in place):
 * only what changes is copied.
 */
function defaultSliceTaintTimes(obj: KubeObject, now: string): void {
  const spec = asObj(obj['spec']);
  const devices = spec['devices'];
  if (!Array.isArray(devices)) return;
  let changed = false;
  const next = devices.map((d: unknown) => {
    const taints = asObj(d)['taints'];
    if (!Array.isArray(taints)) return d;
    const times = taints.map((t: unknown) => storedTimeAdded(t, now));
    if (times.every((t) => t === undefined)) return d;
    changed = true;
    return {
      ...asObj(d),
      taints: taints.map((t: unknown, i) => {
        const timeAdded = times[i];
        return timeAdded === undefined ? t : { ...asObj(t), timeAdded };
      }),
    };
  });
  if (changed) obj['spec'] = { ...spec, devices: next };
}

/**
 * pkg/registry/resource/resourceslice (strategy.go) with the decoding's SetDefaults_DeviceTaint: a
 * taint without timeAdded gets the current second on create and on every update — the strategy
 * keeps no time from the stored slice, so a writer that leaves it out gets a new one each time
 * (upstream's resourceslice controller copies the stored time into the taints it writes).
 */
export function resourceSliceStrategy(validate: Validator): RestStrategy {
  return {
    validate,
    prepareForCreate: (obj) => defaultSliceTaintTimes(obj, kubeTime()),
    prepareForUpdate: (obj) => defaultSliceTaintTimes(obj, kubeTime()),
  };
}

const sameTime = (a: unknown, b: unknown) =>
  typeof a === 'string' && typeof b === 'string' && Date.parse(a) === Date.parse(b);

/** pkg/registry/resource/devicetaintrule: strategy.go (Strategy) and storage/storage.go (NewRESTv1). */
export function deviceTaintRuleStrategy(validate: Validator): RestStrategy {
  return {
    validate,
    prepareForCreate: (obj) => defaultTimeAdded(obj, kubeTime()),
    prepareForUpdate: (obj, old) => {
      const now = kubeTime();
      defaultTimeAdded(obj, now);
      // TimeAdded tracks when the *effect* was set (what tolerationSeconds count from): a changed
      // effect whose client kept the old time gets the current one.
      const taint = asObj(asObj(obj['spec'])['taint']);
      const oldTaint = asObj(asObj(old['spec'])['taint']);
      if (taint['effect'] !== oldTaint['effect'] && sameTime(taint['timeAdded'], oldTaint['timeAdded']))
        withTaint(obj, { ...taint, timeAdded: now });
    },
    allowUnconditionalUpdate: false,
    returnDeletedObject: false,
  };
}

const deviceKey = (d: unknown): string => {
  const o = asObj(d);
  return JSON.stringify([o['driver'], o['pool'], o['device'], o['shareID'] ?? '']);
};

/**
 * resourceclaim strategy.go dropDeallocatedStatusDevices: the `status.devices` entries of devices the
 * stored allocation had and the new one has not are dropped, so a deallocated claim carries no
 * stale device status (whoever deallocates need not know the field). `obj`'s status is replaced,
 * never mutated (it may be the sent object's). kubelet-sim's own deallocations (the scheduler, the
 * resourceclaim controller) call it too: upstream's go through this strategy as status updates.
 */
export function dropDeallocatedStatusDevices(obj: KubeObject, old: KubeObject): void {
  const status = asObj(obj['status']);
  const devices = status['devices'];
  if (!Array.isArray(devices)) return;
  const results = (o: KubeObject): unknown[] => {
    const r = asObj(asObj(asObj(o['status'])['allocation'])['devices'])['results'];
    return Array.isArray(r) ? r : [];
  };
  const gone = new Set(results(old).map(deviceKey));
  for (const r of results(obj)) gone.delete(deviceKey(r));
  const kept = devices.filter((d) => !gone.has(deviceKey(d)));
  if (kept.length === devices.length) return;
  const next: Obj = { ...status, devices: kept };
  if (kept.length === 0) delete next['devices'];
  obj['status'] = next;
}
