// Label and field selectors as the API server parses them for list and watch requests
// (k8s.io/apimachinery labels and fields, and each kind's field labels; Kubernetes 1.33).

import type { KubeObject, ObjectFilter } from './object-store.js';

export class SelectorError extends Error {}

type Requirement = (labels: Record<string, string>) => boolean;

/** `a=b,c!=d,e in (x,y),f notin (z),g,!h` */
export function parseLabelSelector(text: string): ObjectFilter {
  const reqs: Requirement[] = [];
  for (const part of splitTopLevel(text)) {
    const s = part.trim();
    if (!s) continue;
    let m: RegExpExecArray | null;
    if ((m = /^([\w./-]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(s))) {
      const [, k, op, list] = m as unknown as [string, string, string, string];
      const values = new Set(
        list
          .split(',')
          .map((v) => v.trim())
          .filter(Boolean),
      );
      reqs.push(op === 'in' ? (l) => k in l && values.has(l[k]!) : (l) => !(k in l) || !values.has(l[k]!));
    } else if ((m = /^([\w./-]+)\s*(==|=|!=)\s*([\w.-]*)$/.exec(s))) {
      const [, k, op, v] = m as unknown as [string, string, string, string];
      reqs.push(op === '!=' ? (l) => l[k] !== v : (l) => l[k] === v);
    } else if ((m = /^!([\w./-]+)$/.exec(s))) {
      const k = m[1]!;
      reqs.push((l) => !(k in l));
    } else if ((m = /^([\w./-]+)$/.exec(s))) {
      const k = m[1]!;
      reqs.push((l) => k in l);
    } else {
      throw new SelectorError(`unable to parse requirement: ${s}`);
    }
  }
  return (obj) => reqs.every((r) => r((obj.metadata['labels'] as Record<string, string> | undefined) ?? {}));
}

function splitTopLevel(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out;
}

export type FieldGetters = Record<string, (obj: KubeObject) => string | undefined>;

const path =
  (...keys: string[]) =>
  (obj: KubeObject) => {
    let v: unknown = obj;
    for (const k of keys) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
    if (v === undefined || v === null) return '';
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return String(v);
    return JSON.stringify(v);
  };

const META: FieldGetters = {
  'metadata.name': path('metadata', 'name'),
  'metadata.namespace': path('metadata', 'namespace'),
};

/** The field labels each kind supports (the API server's per-kind field label conversion). */
export const FIELDS: Record<string, FieldGetters> = {
  Node: { ...META, 'spec.unschedulable': (o) => path('spec', 'unschedulable')(o) || 'false' },
  Pod: {
    ...META,
    'spec.nodeName': path('spec', 'nodeName'),
    'spec.restartPolicy': path('spec', 'restartPolicy'),
    'spec.schedulerName': path('spec', 'schedulerName'),
    'spec.serviceAccountName': path('spec', 'serviceAccountName'),
    'spec.hostNetwork': (o) => path('spec', 'hostNetwork')(o) || 'false',
    'status.phase': path('status', 'phase'),
    'status.podIP': path('status', 'podIP'),
    'status.nominatedNodeName': path('status', 'nominatedNodeName'),
  },
  ResourceSlice: {
    ...META,
    'spec.nodeName': path('spec', 'nodeName'),
    'spec.driver': path('spec', 'driver'),
  },
  Event: {
    ...META,
    'involvedObject.kind': path('involvedObject', 'kind'),
    'involvedObject.namespace': path('involvedObject', 'namespace'),
    'involvedObject.name': path('involvedObject', 'name'),
    'involvedObject.uid': path('involvedObject', 'uid'),
    'involvedObject.apiVersion': path('involvedObject', 'apiVersion'),
    'involvedObject.resourceVersion': path('involvedObject', 'resourceVersion'),
    'involvedObject.fieldPath': path('involvedObject', 'fieldPath'),
    reason: path('reason'),
    reportingComponent: path('reportingComponent'),
    source: path('source', 'component'),
    type: path('type'),
  },
};

/** `spec.nodeName=node-1,status.phase!=Failed` */
export function parseFieldSelector(text: string, kind: string): ObjectFilter {
  const getters = FIELDS[kind] ?? META;
  const reqs: ((obj: KubeObject) => boolean)[] = [];
  for (const part of text.split(',')) {
    const s = part.trim();
    if (!s) continue;
    const m = /^([^=!]+)(==|=|!=)(.*)$/.exec(s);
    if (!m) throw new SelectorError(`invalid selector: '${text}'; can't understand '${s}'`);
    const [, field, op, value] = m as unknown as [string, string, string, string];
    const get = getters[field.trim()];
    if (!get) throw new SelectorError(`field label not supported: ${field.trim()}`);
    reqs.push(op === '!=' ? (o) => get(o) !== value : (o) => get(o) === value);
  }
  return (obj) => reqs.every((r) => r(obj));
}
