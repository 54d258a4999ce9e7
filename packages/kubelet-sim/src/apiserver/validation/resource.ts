// Validation of the resource.k8s.io/v1 kinds, as kube-apiserver applies it
// (pkg/apis/resource/validation/validation.go, release-1.37): names and qualified names, the
// limits (32 requests, 8 subrequests, 32 selectors, 128 devices per slice, 32 attributes and
// capacities per device), exactly one of `exactly`/`firstAvailable`, allocation modes and counts,
// constraints naming existing requests with fully qualified attributes, one way to select nodes per
// slice, typed attributes, device taints and tolerations (label keys and values, effects), a
// DeviceTaintRule's selector and taint and its status conditions (metav1 ValidateConditions), a
// DeviceClass's extendedResourceName (an extended resource name, DRAExtendedResource), a claim's
// status.devices (validateDeviceStatus: names, an allocated device each, conditions, data,
// networkData), and
// the immutable fields (a claim's and a template's spec, a slice's driver and node). CEL selectors
// are compiled when a compiler is given. The field paths and messages are the ones `kubectl` prints
// from a real API server.

import { isIPv4, isIPv6 } from 'node:net';
import type { FieldError, Validator } from '../rest-storage.js';
import type { KubeObject } from '../object-store.js';
import { storeKey } from '../resources.js';

type Obj = Record<string, unknown>;

/** Compiles one CEL device selector; returns the API server's error text (`compilation failed: …`) or null. */
export type SelectorCompiler = (expression: string) => string | null;

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const C_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

const LIMITS = {
  requests: 32,
  subrequests: 8,
  selectors: 32,
  constraints: 32,
  config: 32,
  devicesPerSlice: 128,
  devicesPerSliceWithAdvancedFeatures: 64,
  attributesAndCapacity: 32,
  taints: 16,
  reservedFor: 256,
  attributeName: 32,
  stringValue: 64,
  celLength: 10 * 1024,
  poolName: 253,
  /** DeviceTaintRuleStatusMaxConditions. */
  taintRuleConditions: 8,
  labelKeyName: 63,
  labelValue: 63,
  conditionReason: 1024,
  conditionMessage: 32 * 1024,
  /** AllocatedDeviceStatusMaxConditions, AllocatedDeviceStatusDataMaxLength. */
  deviceStatusConditions: 8,
  deviceStatusData: 10 * 1024,
  /** NetworkDeviceDataMaxIPs, …InterfaceNameMaxLength, …HardwareAddressMaxLength. */
  networkIps: 16,
  interfaceName: 256,
  hardwareAddress: 128,
};

// k8s.io/apimachinery pkg/api/validate/content: label keys and values (IsLabelKey, IsLabelValue).
const LABEL_KEY_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const LABEL_KEY_MESSAGE =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_MESSAGE =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const DNS1123_SUBDOMAIN_MESSAGE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
// metav1 validation: condition reasons (IsValidConditionReason).
const CONDITION_REASON = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;
const CONDITION_REASON_MESSAGE =
  "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')";
/** metav1.Time{}: an unset timestamp. */
const ZERO_TIME = Date.parse('0001-01-01T00:00:00Z');
/** validDeviceTaintEffects, as sets.List orders them. */
const TAINT_EFFECTS = ['NoExecute', 'NoSchedule', 'None'];

const q = (v: unknown) => JSON.stringify(v);

class Errors {
  readonly list: FieldError[] = [];
  required(field: string, what = ''): void {
    this.list.push({ type: 'FieldValueRequired', field, detail: `Required value${what ? `: ${what}` : ''}` });
  }
  invalid(field: string, value: unknown, why: string): void {
    this.list.push({ type: 'FieldValueInvalid', field, detail: `Invalid value: ${q(value)}: ${why}` });
  }
  notSupported(field: string, value: unknown, allowed: string[]): void {
    this.list.push({
      type: 'FieldValueNotSupported',
      field,
      detail: `Unsupported value: ${q(value)}: supported values: ${allowed.map((a) => q(a)).join(', ')}`,
    });
  }
  duplicate(field: string, value: unknown): void {
    this.list.push({ type: 'FieldValueDuplicate', field, detail: `Duplicate value: ${q(value)}` });
  }
  forbidden(field: string, why: string): void {
    this.list.push({ type: 'FieldValueForbidden', field, detail: `Forbidden: ${why}` });
  }
  tooMany(field: string, actual: number, max: number): void {
    this.list.push({
      type: 'FieldValueTooMany',
      field,
      detail: `Too many: ${actual}: must have at most ${max} items`,
    });
  }
  tooLong(field: string, max: number): void {
    this.list.push({
      type: 'FieldValueTooLong',
      field,
      detail: `Too long: may not be more than ${max} bytes`,
    });
  }
  immutable(field: string, value: unknown): void {
    this.invalid(field, value, 'field is immutable');
  }
}

const asObj = (v: unknown): Obj | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined;
const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

function dnsLabel(e: Errors, field: string, v: unknown): void {
  if (typeof v !== 'string' || v === '') return e.required(field);
  if (v.length > 63 || !DNS1123_LABEL.test(v))
    e.invalid(
      field,
      v,
      "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    );
}

function dnsSubdomain(e: Errors, field: string, v: unknown, max = 253): void {
  if (typeof v !== 'string' || v === '') return e.required(field);
  if (v.length > max || !DNS1123_SUBDOMAIN.test(v)) e.invalid(field, v, DNS1123_SUBDOMAIN_MESSAGE);
}

/** validatePoolName: one or more DNS subdomains separated by slashes, at most 253 bytes in all. */
function poolName(e: Errors, field: string, v: unknown): void {
  if (typeof v !== 'string' || v === '') return e.required(field);
  if (v.length > LIMITS.poolName) e.tooLong(field, LIMITS.poolName);
  for (const part of v.split('/'))
    if (part.length > 253 || !DNS1123_SUBDOMAIN.test(part)) e.invalid(field, part, DNS1123_SUBDOMAIN_MESSAGE);
}

/**
 * metav1validation.ValidateLabelName (content.IsLabelKey): an optional DNS subdomain prefix and `/`,
 * then a name. Errors show `shown` as the value (default: the key itself).
 */
function labelKey(e: Errors, field: string, v: unknown, shown?: string): void {
  const checked = typeof v === 'string' ? v : '';
  const key = shown ?? checked;
  const parts = checked.split('/');
  if (parts.length > 2)
    return e.invalid(
      field,
      key,
      `a valid label key ${LABEL_KEY_MESSAGE} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    );
  const name = parts.length === 2 ? parts[1]! : checked;
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (prefix === '') e.invalid(field, key, 'prefix part must be non-empty');
    else {
      if (prefix.length > 253) e.invalid(field, key, 'prefix part must be no more than 253 bytes');
      if (!DNS1123_SUBDOMAIN.test(prefix)) e.invalid(field, key, `prefix part ${DNS1123_SUBDOMAIN_MESSAGE}`);
    }
  }
  if (name === '') e.invalid(field, key, 'name part must be non-empty');
  else if (name.length > LIMITS.labelKeyName)
    e.invalid(field, key, `name part must be no more than ${LIMITS.labelKeyName} bytes`);
  if (!LABEL_KEY_NAME.test(name)) e.invalid(field, key, `name part ${LABEL_KEY_MESSAGE}`);
}

/**
 * validate.ExtendedResourceName (format=k8s-extended-resource-name, the declarative validation that
 * is authoritative for DeviceClass.spec.extendedResourceName in 1.37), with its messages.
 */
function extendedResourceName(e: Errors, field: string, v: unknown): void {
  const value = typeof v === 'string' ? v : '';
  if (!value.includes('/'))
    e.invalid(field, value, "a name must be a domain-prefixed path, such as 'example.com/my-prop'");
  else if (value.includes('kubernetes.io/')) e.invalid(field, value, 'must not have "kubernetes.io/" domain');
  if (value.startsWith('requests.')) e.invalid(field, value, 'must not have "requests." prefix');
  labelKey(e, field, `requests.${value}`, value);
}

/** validateLabelValue (content.IsLabelValue). */
function labelValue(e: Errors, field: string, v: unknown): void {
  const value = typeof v === 'string' ? v : '';
  if (value.length > LIMITS.labelValue)
    e.invalid(field, value, `must be no more than ${LIMITS.labelValue} bytes`);
  if (!LABEL_VALUE.test(value)) e.invalid(field, value, LABEL_VALUE_MESSAGE);
}

/** `domain/ID` (or, unless `requireDomain`, a bare C identifier), as attributes and capacities are named. */
function qualifiedName(e: Errors, field: string, v: unknown, requireDomain: boolean): void {
  if (typeof v !== 'string' || v === '') return e.required(field);
  const slash = v.indexOf('/');
  if (slash < 0) {
    if (requireDomain) return e.required(field, 'the domain is required');
  } else {
    dnsSubdomain(e, field, v.slice(0, slash), 63);
  }
  const id = slash < 0 ? v : v.slice(slash + 1);
  if (!C_IDENTIFIER.test(id) || id.length > LIMITS.attributeName)
    e.invalid(
      field,
      id,
      `a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for validation is '[A-Za-z_][A-Za-z0-9_]*')${id.length > LIMITS.attributeName ? `, must be no more than ${LIMITS.attributeName} characters` : ''}`,
    );
}

function selectors(e: Errors, field: string, v: unknown, compile: SelectorCompiler | undefined): void {
  const list = asList(v);
  if (list.length > LIMITS.selectors) e.tooMany(field, list.length, LIMITS.selectors);
  list.forEach((s, i) => {
    const cel = asObj(asObj(s)?.['cel']);
    const f = `${field}[${i}].cel`;
    if (!cel) return e.required(f);
    const expr = cel['expression'];
    if (typeof expr !== 'string' || expr === '') return e.required(`${f}.expression`);
    if (expr.length > LIMITS.celLength)
      return e.list.push({
        type: 'FieldValueTooLong',
        field: `${f}.expression`,
        detail: `Too long: may not be more than ${LIMITS.celLength} bytes`,
      });
    const err = compile?.(expr);
    if (err) e.invalid(`${f}.expression`, expr, err);
  });
}

/** validateDeviceToleration (the operator defaults to Equal). */
function tolerations(e: Errors, field: string, v: unknown): void {
  asList(v).forEach((t, i) => {
    const tol = asObj(t) ?? {};
    const f = `${field}[${i}]`;
    if (tol['key'] !== undefined && tol['key'] !== '') labelKey(e, `${f}.key`, tol['key']);
    const op = tol['operator'] ?? 'Equal';
    if (op === 'Exists') {
      if (tol['value']) e.invalid(`${f}.value`, tol['value'], 'must be empty for operator `Exists`');
    } else if (op === 'Equal') labelValue(e, `${f}.value`, tol['value']);
    else e.notSupported(`${f}.operator`, op, ['Equal', 'Exists']);
    const effect = tol['effect'];
    if (effect !== undefined && effect !== '' && !TAINT_EFFECTS.includes(effect as string))
      e.notSupported(`${f}.effect`, effect, TAINT_EFFECTS);
  });
}

/**
 * validateDeviceTaint, in a ResourceSlice and in a DeviceTaintRule: the key is a label key, the value
 * a label value, the effect one of None, NoSchedule, NoExecute — checked only when it is new or
 * changed (`old`), so that effects added later stay in stored objects.
 */
function deviceTaint(e: Errors, field: string, taint: Obj, old: Obj | undefined): void {
  labelKey(e, `${field}.key`, taint['key']);
  if (taint['value'] !== undefined && taint['value'] !== '') labelValue(e, `${field}.value`, taint['value']);
  const effect = taint['effect'];
  if (old !== undefined && old['effect'] === effect) return;
  if (effect === undefined || effect === '') e.required(`${field}.effect`);
  else if (!TAINT_EFFECTS.includes(effect as string))
    e.notSupported(`${field}.effect`, effect, TAINT_EFFECTS);
}

/** metav1validation.ValidateConditions, then the list's limit. */
function conditions(e: Errors, field: string, v: unknown, max: number): void {
  const list = asList(v);
  const types = new Set<unknown>();
  list.forEach((raw, i) => {
    const c = asObj(raw) ?? {};
    const f = `${field}[${i}]`;
    if (types.has(c['type'])) e.duplicate(f, c['type']);
    types.add(c['type']);
    if (typeof c['type'] !== 'string' || c['type'] === '') e.required(`${f}.type`, 'is required');
    else labelKey(e, `${f}.type`, c['type']);
    const status = c['status'];
    if (status === undefined || status === '') e.required(`${f}.status`);
    else if (status !== 'True' && status !== 'False' && status !== 'Unknown')
      e.notSupported(`${f}.status`, status, ['False', 'True', 'Unknown']);
    const observed = c['observedGeneration'];
    if (typeof observed === 'number' && observed < 0)
      e.invalid(`${f}.observedGeneration`, observed, 'must be greater than or equal to zero');
    const transition = c['lastTransitionTime'];
    if (typeof transition !== 'string' || transition === '' || Date.parse(transition) === ZERO_TIME)
      e.required(`${f}.lastTransitionTime`);
    const reason = c['reason'];
    if (typeof reason !== 'string' || reason === '') e.required(`${f}.reason`);
    else {
      if (!CONDITION_REASON.test(reason)) e.invalid(`${f}.reason`, reason, CONDITION_REASON_MESSAGE);
      if (reason.length > LIMITS.conditionReason) e.tooLong(`${f}.reason`, LIMITS.conditionReason);
    }
    if (typeof c['message'] === 'string' && c['message'].length > LIMITS.conditionMessage)
      e.tooLong(`${f}.message`, LIMITS.conditionMessage);
  });
  if (list.length > max) e.tooMany(field, list.length, max);
}

function exactRequest(e: Errors, field: string, r: Obj, compile: SelectorCompiler | undefined): void {
  dnsSubdomain(e, `${field}.deviceClassName`, r['deviceClassName']);
  selectors(e, `${field}.selectors`, r['selectors'], compile);
  const mode = r['allocationMode'] ?? 'ExactCount';
  if (mode !== 'ExactCount' && mode !== 'All')
    e.notSupported(`${field}.allocationMode`, mode, ['All', 'ExactCount']);
  const count = r['count'];
  if (mode === 'All' && count !== undefined && count !== 0)
    e.invalid(`${field}.count`, count, 'must not be specified when allocationMode is All');
  if (mode === 'ExactCount' && count !== undefined && !(Number.isInteger(count) && (count as number) > 0))
    e.invalid(`${field}.count`, count, 'must be greater than zero');
  tolerations(e, `${field}.tolerations`, r['tolerations']);
}

function claimSpec(
  e: Errors,
  field: string,
  spec: Obj | undefined,
  compile: SelectorCompiler | undefined,
): void {
  const devices = asObj(spec?.['devices']) ?? {};
  const requests = asList(devices['requests']);
  const fr = `${field}.devices.requests`;
  if (requests.length > LIMITS.requests) e.tooMany(fr, requests.length, LIMITS.requests);
  const names = new Set<string>();
  requests.forEach((raw, i) => {
    const r = asObj(raw) ?? {};
    const f = `${fr}[${i}]`;
    dnsLabel(e, `${f}.name`, r['name']);
    if (typeof r['name'] === 'string') {
      if (names.has(r['name'])) e.duplicate(`${f}.name`, r['name']);
      names.add(r['name']);
    }
    const exactly = asObj(r['exactly']);
    const first = r['firstAvailable'];
    if (!exactly && first === undefined)
      return e.required(f, 'exactly one of `exactly` or `firstAvailable` is required');
    if (exactly && first !== undefined)
      return e.invalid(
        f,
        '{…}',
        'exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set',
      );
    if (exactly) return exactRequest(e, `${f}.exactly`, exactly, compile);
    const subs = asList(first);
    if (subs.length === 0) e.required(`${f}.firstAvailable`);
    if (subs.length > LIMITS.subrequests) e.tooMany(`${f}.firstAvailable`, subs.length, LIMITS.subrequests);
    const subNames = new Set<string>();
    subs.forEach((s, j) => {
      const sub = asObj(s) ?? {};
      const fs = `${f}.firstAvailable[${j}]`;
      dnsLabel(e, `${fs}.name`, sub['name']);
      if (typeof sub['name'] === 'string') {
        if (subNames.has(sub['name'])) e.duplicate(`${fs}.name`, sub['name']);
        subNames.add(sub['name']);
        if (typeof r['name'] === 'string') names.add(`${r['name']}/${sub['name']}`);
      }
      exactRequest(e, fs, sub, compile);
    });
  });
  const constraints = asList(devices['constraints']);
  if (constraints.length > LIMITS.constraints)
    e.tooMany(`${field}.devices.constraints`, constraints.length, LIMITS.constraints);
  constraints.forEach((raw, i) => {
    const c = asObj(raw) ?? {};
    const f = `${field}.devices.constraints[${i}]`;
    requestRefs(e, f, c['requests'], names);
    if (c['matchAttribute'] === undefined) e.required(`${f}.matchAttribute`);
    else qualifiedName(e, `${f}.matchAttribute`, c['matchAttribute'], true);
  });
  const config = asList(devices['config']);
  if (config.length > LIMITS.config) e.tooMany(`${field}.devices.config`, config.length, LIMITS.config);
  config.forEach((raw, i) => {
    const c = asObj(raw) ?? {};
    const f = `${field}.devices.config[${i}]`;
    requestRefs(e, f, c['requests'], names);
    opaque(e, f, c);
  });
}

/** `requests` of a constraint or a config: names of the claim's requests (or `request/subrequest`). */
function requestRefs(e: Errors, field: string, refs: unknown, names: ReadonlySet<string>): void {
  asList(refs).forEach((name, j) => {
    if (typeof name !== 'string' || !names.has(name))
      e.invalid(
        `${field}.requests[${j}]`,
        name,
        "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'",
      );
  });
}

function opaque(e: Errors, field: string, c: Obj): void {
  const o = asObj(c['opaque']);
  if (!o) return e.required(`${field}.opaque`);
  dnsSubdomain(e, `${field}.opaque.driver`, o['driver'], 63);
  if (o['parameters'] === undefined) e.required(`${field}.opaque.parameters`);
}

function meta(e: Errors, obj: KubeObject): void {
  dnsSubdomain(e, 'metadata.name', obj.metadata.name);
}

function immutableSpec(
  e: Errors,
  old: KubeObject | undefined,
  field: string,
  value: unknown,
  was: unknown,
): void {
  if (old && JSON.stringify(value ?? null) !== JSON.stringify(was ?? null)) e.immutable(field, value);
}

export function validateDeviceClass(compile?: SelectorCompiler): Validator {
  return (obj) => {
    const e = new Errors();
    meta(e, obj);
    const spec = asObj(obj['spec']) ?? {};
    selectors(e, 'spec.selectors', spec['selectors'], compile);
    const config = asList(spec['config']);
    if (config.length > LIMITS.config) e.tooMany('spec.config', config.length, LIMITS.config);
    config.forEach((c, i) => opaque(e, `spec.config[${i}]`, asObj(c) ?? {}));
    if (spec['extendedResourceName'] !== undefined)
      extendedResourceName(e, 'spec.extendedResourceName', spec['extendedResourceName']);
    return e.list;
  };
}

export function validateResourceClaim(compile?: SelectorCompiler): Validator {
  return (obj, old) => {
    const e = new Errors();
    meta(e, obj);
    claimSpec(e, 'spec', asObj(obj['spec']), compile);
    immutableSpec(e, old, 'spec', obj['spec'], old?.['spec']);
    const status = asObj(obj['status']);
    const reserved = asList(status?.['reservedFor']);
    if (reserved.length > LIMITS.reservedFor)
      e.tooMany('status.reservedFor', reserved.length, LIMITS.reservedFor);
    reserved.forEach((r, i) => {
      const ref = asObj(r) ?? {};
      for (const k of ['resource', 'name', 'uid'])
        if (typeof ref[k] !== 'string' || ref[k] === '') e.required(`status.reservedFor[${i}].${k}`);
    });
    const allocation = asObj(status?.['allocation']);
    const results = asList(asObj(allocation?.['devices'])?.['results']);
    results.forEach((r, i) => {
      const res = asObj(r) ?? {};
      const f = `status.allocation.devices.results[${i}]`;
      if (typeof res['request'] !== 'string' || res['request'] === '') e.required(`${f}.request`);
      dnsSubdomain(e, `${f}.driver`, res['driver'], 63);
      if (typeof res['pool'] !== 'string' || res['pool'] === '') e.required(`${f}.pool`);
      dnsLabel(e, `${f}.device`, res['device']);
    });
    deviceStatuses(e, status);
    const oldAllocation = asObj(asObj(old?.['status'])?.['allocation']);
    if (oldAllocation && allocation && JSON.stringify(oldAllocation) !== JSON.stringify(allocation))
      e.immutable('status.allocation', '{…}');
    return e.list;
  };
}

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** validateUID (format=k8s-uuid): an RFC 4122 UUID in normalized, lower-case form. */
function uid(e: Errors, field: string, v: unknown): void {
  const text = typeof v === 'string' ? v : '';
  if (!UUID.test(text)) e.invalid(field, text, `error validating uid: invalid UUID length: ${text.length}`);
  else if (text !== text.toLowerCase())
    e.invalid(
      field,
      text,
      'uid must be in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase hexadecimal characters',
    );
}

/** The canonical `ip/prefix` of an interface address (net.ParseCIDR, ip.String()), or null. */
function canonicalCidr(value: string): string | null {
  const slash = value.indexOf('/');
  if (slash < 0) return null;
  const ip = value.slice(0, slash);
  const bits = value.slice(slash + 1);
  if (!/^\d{1,3}$/.test(bits)) return null;
  if (isIPv4(ip)) return Number(bits) <= 32 ? `${ip}/${Number(bits)}` : null;
  if (!isIPv6(ip) || Number(bits) > 128) return null;
  // The WHATWG serializer compresses IPv6 as RFC 5952 (and Go's ip.String()) do.
  return `${new URL(`http://[${ip}]`).hostname.slice(1, -1)}/${Number(bits)}`;
}

/** validateNetworkDeviceData. */
function networkData(e: Errors, field: string, n: Obj): void {
  const name = n['interfaceName'];
  if (typeof name === 'string' && Buffer.byteLength(name) > LIMITS.interfaceName)
    e.tooLong(`${field}.interfaceName`, LIMITS.interfaceName);
  const mac = n['hardwareAddress'];
  if (typeof mac === 'string' && Buffer.byteLength(mac) > LIMITS.hardwareAddress)
    e.tooLong(`${field}.hardwareAddress`, LIMITS.hardwareAddress);
  const ips = asList(n['ips']);
  if (ips.length > LIMITS.networkIps) return e.tooMany(`${field}.ips`, ips.length, LIMITS.networkIps);
  const seen = new Set<unknown>();
  ips.forEach((ip, i) => {
    const f = `${field}.ips[${i}]`;
    const text = typeof ip === 'string' ? ip : '';
    const canonical = canonicalCidr(text);
    if (canonical === null)
      e.invalid(f, text, 'must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)');
    else if (canonical !== text) e.invalid(f, text, `must be in canonical form (${q(canonical)})`);
    if (seen.has(ip)) e.duplicate(f, ip);
    seen.add(ip);
  });
}

/**
 * The key of a status.devices entry and of an allocation result (structured.SharedDeviceID, as
 * field errors render it: JSON of Driver, Pool, Device, ShareID).
 */
function sharedDeviceId(d: Obj): { Driver: unknown; Pool: unknown; Device: unknown; ShareID: unknown } {
  return { Driver: d['driver'], Pool: d['pool'], Device: d['device'], ShareID: d['shareID'] ?? '' };
}

/** validateResourceClaimStatusUpdate's `status.devices`: validateSet of validateDeviceStatus. */
function deviceStatuses(e: Errors, status: Obj | undefined): void {
  const allocated = new Set(
    asList(asObj(asObj(status?.['allocation'])?.['devices'])?.['results']).map((r) =>
      q(sharedDeviceId(asObj(r) ?? {})),
    ),
  );
  const seen = new Set<string>();
  asList(status?.['devices']).forEach((raw, i) => {
    const d = asObj(raw) ?? {};
    const f = `status.devices[${i}]`;
    dnsSubdomain(e, `${f}.driver`, d['driver'], 63);
    poolName(e, `${f}.pool`, d['pool']);
    dnsLabel(e, `${f}.device`, d['device']);
    if (d['shareID'] !== undefined && d['shareID'] !== null) uid(e, `${f}.shareID`, d['shareID']);
    const key = q(sharedDeviceId(d));
    if (!allocated.has(key)) e.invalid(f, sharedDeviceId(d), 'must be an allocated device in the claim');
    const list = asList(d['conditions']);
    if (list.length > LIMITS.deviceStatusConditions)
      e.tooMany(`${f}.conditions`, list.length, LIMITS.deviceStatusConditions);
    conditions(e, `${f}.conditions`, list, Infinity);
    const data = d['data'];
    if (data !== undefined && data !== null) {
      if (JSON.stringify(data).length > LIMITS.deviceStatusData)
        e.tooLong(`${f}.data`, LIMITS.deviceStatusData);
      else if (asObj(data) === undefined)
        e.invalid(`${f}.data`, '<value omitted>', 'must be a valid JSON object');
    }
    const network = asObj(d['networkData']);
    if (network) networkData(e, `${f}.networkData`, network);
    if (seen.has(key)) e.duplicate(f, sharedDeviceId(d));
    seen.add(key);
  });
}

export function validateResourceClaimTemplate(compile?: SelectorCompiler): Validator {
  return (obj, old) => {
    const e = new Errors();
    meta(e, obj);
    const spec = asObj(obj['spec']) ?? {};
    claimSpec(e, 'spec.spec', asObj(spec['spec']), compile);
    immutableSpec(e, old, 'spec', obj['spec'], old?.['spec']);
    return e.list;
  };
}

const NODE_SELECTION = ['nodeName', 'nodeSelector', 'allNodes', 'perDeviceNodeSelection'] as const;

export function validateResourceSlice(): Validator {
  return (obj, old) => {
    const e = new Errors();
    meta(e, obj);
    const spec = asObj(obj['spec']) ?? {};
    dnsSubdomain(e, 'spec.driver', spec['driver'], 63);
    const pool = asObj(spec['pool']);
    if (!pool) e.required('spec.pool');
    else {
      poolName(e, 'spec.pool.name', pool['name']);
      const gen = pool['generation'] ?? 0;
      if (!Number.isInteger(gen) || (gen as number) < 0)
        e.invalid('spec.pool.generation', gen, 'must be greater than or equal to 0');
      const count = pool['resourceSliceCount'];
      if (!Number.isInteger(count) || (count as number) < 1)
        e.invalid('spec.pool.resourceSliceCount', count ?? 0, 'must be greater than zero');
    }
    const set = NODE_SELECTION.filter((k) => spec[k] !== undefined && spec[k] !== false && spec[k] !== '');
    if (set.length !== 1)
      e.invalid(
        'spec',
        '{…}',
        `exactly one of \`nodeName\`, \`nodeSelector\`, \`allNodes\`, \`perDeviceNodeSelection\` is required${set.length > 1 ? ', but multiple fields are set' : ''}`,
      );
    if (typeof spec['nodeName'] === 'string' && spec['nodeName'])
      dnsSubdomain(e, 'spec.nodeName', spec['nodeName']);
    // Since 1.35 a slice holds counter sets or devices (partitionable devices put them in
    // separate slices of one pool); `devices: []` counts as set, as a non-nil Go slice does.
    const present = (v: unknown): boolean => v !== undefined && v !== null;
    if (present(spec['sharedCounters']) && present(spec['devices']))
      e.invalid('spec', '', 'only one of `sharedCounters` or `devices` is allowed');
    const devices = asList(spec['devices']);
    // ResourceSliceMaxDevicesWithAdvancedFeatures once any device has taints or consumes counters.
    const advanced = devices.some((raw) => {
      const d = asObj(raw) ?? {};
      return asList(d['taints']).length > 0 || asList(d['consumesCounters']).length > 0;
    });
    const maxDevices = advanced ? LIMITS.devicesPerSliceWithAdvancedFeatures : LIMITS.devicesPerSlice;
    if (devices.length > maxDevices) e.tooMany('spec.devices', devices.length, maxDevices);
    const names = new Set<string>();
    devices.forEach((raw, i) => {
      const d = asObj(raw) ?? {};
      const f = `spec.devices[${i}]`;
      dnsLabel(e, `${f}.name`, d['name']);
      if (typeof d['name'] === 'string') {
        if (names.has(d['name'])) e.duplicate(`${f}.name`, d['name']);
        names.add(d['name']);
      }
      const attributes = asObj(d['attributes']) ?? {};
      const capacity = asObj(d['capacity']) ?? {};
      const total = Object.keys(attributes).length + Object.keys(capacity).length;
      if (total > LIMITS.attributesAndCapacity)
        e.invalid(
          f,
          total,
          `the total number of attributes and capacities must not exceed ${LIMITS.attributesAndCapacity}`,
        );
      for (const [name, rawValue] of Object.entries(attributes)) {
        const fa = `${f}.attributes[${q(name)}]`;
        qualifiedName(e, fa, name, false);
        const value = asObj(rawValue) ?? {};
        const kinds = ['int', 'bool', 'string', 'version'].filter((k) => value[k] !== undefined);
        if (kinds.length !== 1) {
          e.invalid(
            fa,
            value,
            kinds.length === 0
              ? 'exactly one value must be specified'
              : 'exactly one value must be specified, but multiple fields are set',
          );
          continue;
        }
        const [kind] = kinds as [string];
        const v = value[kind];
        if (kind === 'int' && !Number.isInteger(v)) e.invalid(`${fa}.int`, v, 'must be an integer');
        if (kind === 'bool' && typeof v !== 'boolean') e.invalid(`${fa}.bool`, v, 'must be a boolean');
        if (kind === 'string' && (typeof v !== 'string' || v.length > LIMITS.stringValue))
          e.invalid(`${fa}.string`, v, `must be a string of at most ${LIMITS.stringValue} characters`);
        if (kind === 'version' && (typeof v !== 'string' || v.length > LIMITS.stringValue || !SEMVER.test(v)))
          e.invalid(`${fa}.version`, v, 'must be a string compatible with semver.org spec 2.0.0');
      }
      for (const [name, rawValue] of Object.entries(capacity)) {
        const fc = `${f}.capacity[${q(name)}]`;
        qualifiedName(e, fc, name, false);
        if (asObj(rawValue)?.['value'] === undefined) e.required(`${fc}.value`);
      }
      const taints = asList(d['taints']);
      if (taints.length > LIMITS.taints) e.tooMany(`${f}.taints`, taints.length, LIMITS.taints);
      taints.forEach((t, j) => deviceTaint(e, `${f}.taints[${j}]`, asObj(t) ?? {}, undefined));
    });
    if (old) {
      const oldSpec = asObj(old['spec']) ?? {};
      if (spec['driver'] !== oldSpec['driver']) e.immutable('spec.driver', spec['driver']);
      if ((spec['nodeName'] ?? '') !== (oldSpec['nodeName'] ?? ''))
        e.immutable('spec.nodeName', spec['nodeName']);
    }
    return e.list;
  };
}

/**
 * ValidateDeviceTaintRule, ValidateDeviceTaintRuleUpdate and ValidateDeviceTaintRuleStatusUpdate in
 * one: the selector's driver, pool and device names (each only when set), the taint, and the status
 * conditions (at most 8). On update the stored status is kept and on a status update the stored
 * spec, so each write checks what it may change.
 */
export function validateDeviceTaintRule(): Validator {
  return (obj, old) => {
    const e = new Errors();
    meta(e, obj);
    const spec = asObj(obj['spec']) ?? {};
    const selector = asObj(spec['deviceSelector']);
    const set = (v: unknown) => v !== undefined && v !== null;
    if (selector) {
      if (set(selector['driver'])) dnsSubdomain(e, 'spec.deviceSelector.driver', selector['driver'], 63);
      if (set(selector['pool'])) poolName(e, 'spec.deviceSelector.pool', selector['pool']);
      if (set(selector['device'])) dnsLabel(e, 'spec.deviceSelector.device', selector['device']);
    }
    const oldTaint = old ? (asObj(asObj(old['spec'])?.['taint']) ?? {}) : undefined;
    deviceTaint(e, 'spec.taint', asObj(spec['taint']) ?? {}, oldTaint);
    conditions(e, 'status.conditions', asObj(obj['status'])?.['conditions'], LIMITS.taintRuleConditions);
    return e.list;
  };
}

/** The validators of the resource.k8s.io kinds, keyed as the API server's stores are. */
export function resourceValidators(compile?: SelectorCompiler): ReadonlyMap<string, Validator> {
  return new Map([
    [storeKey('resource.k8s.io', 'deviceclasses'), validateDeviceClass(compile)],
    [storeKey('resource.k8s.io', 'devicetaintrules'), validateDeviceTaintRule()],
    [storeKey('resource.k8s.io', 'resourceclaims'), validateResourceClaim(compile)],
    [storeKey('resource.k8s.io', 'resourceclaimtemplates'), validateResourceClaimTemplate(compile)],
    [storeKey('resource.k8s.io', 'resourceslices'), validateResourceSlice()],
  ]);
}
