// Server-side Tables (`kubectl get` asks for `application/json;as=Table;v=v1;g=meta.k8s.io` and
// prints whatever columns come back). Mirrors, for the kinds the slice serves:
// - kubernetes pkg/printers/internalversion/printers.go (release-1.34; its column definitions and
//   print functions for pods, nodes, events, namespaces, services and leases), run as the API server
//   runs it (pkg/printers/storage: always Wide, so priority-1 cells are always present and kubectl
//   drops them unless `-o wide`);
// - k8s.io/apiserver pkg/registry/rest/table.go (the default convertor: NAME, CREATED AT) for any
//   other kind;
// - k8s.io/apiserver pkg/endpoints/handlers: negotiation/negotiate.go (which Accept clause wins),
//   response.go (optionsForTransform, asTable's includeObject, the watch encoder that sends
//   columnDefinitions with the first event only);
// - k8s.io/apimachinery pkg/util/duration HumanDuration (AGE, RESTARTS, LAST SEEN).
// Objects are printed as stored: defaults the API server applies on write (a Service's type, a
// port's protocol, a Namespace's phase) are expected to be in them already.

import { HttpError } from './http.js';
import type { KubeObject } from './object-store.js';
import { groupVersion, type ResourceInfo } from './resources.js';

export type IncludeObject = 'None' | 'Metadata' | 'Object';
export type TableVersion = 'v1' | 'v1beta1';

export interface TableRequest {
  version: TableVersion;
  includeObject: IncludeObject;
}

export interface TableColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  /** 0: always shown; 1: `-o wide` only. */
  priority: number;
}

export interface TableListMeta {
  resourceVersion: string;
  continue?: string;
}

// --- Accept negotiation (negotiation.NegotiateMediaTypeOptions) ------------------------------

interface AcceptClause {
  type: string;
  subType: string;
  q: number;
  params: Map<string, string>;
}

/** What kube-apiserver serves for built-in kinds, in its order (`*∕*` picks the first). */
const SERVED_MEDIA_TYPES: readonly { type: string; subType: string; stream: boolean }[] = [
  { type: 'application', subType: 'json', stream: true },
  { type: 'application', subType: 'yaml', stream: false },
  { type: 'application', subType: 'vnd.kubernetes.protobuf', stream: true },
];

const trimSpaces = (s: string) => s.replace(/^ +| +$/g, '');

/** strconv.ParseFloat(s, 32), which goautoneg uses for q: 0 when it is not a number. */
function parseQ(s: string): number {
  return /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s) ? Math.fround(Number(s)) : 0;
}

/** goautoneg.ParseAccept: clauses sorted by q, specific types before wildcards. */
function parseAccept(header: string): AcceptClause[] {
  const clauses: AcceptClause[] = [];
  for (const part of header.split(',')) {
    const [mediaRange = '', ...rawParams] = trimSpaces(part).split(';');
    const sp = mediaRange.split('/');
    const type = trimSpaces(sp[0] ?? '');
    let subType: string;
    if (sp.length === 1 && type === '*') subType = '*';
    else if (sp.length === 2) subType = trimSpaces(sp[1] ?? '');
    else continue;
    const clause: AcceptClause = { type, subType, q: 1, params: new Map() };
    for (const param of rawParams) {
      const eq = param.indexOf('=');
      if (eq < 0) continue;
      const token = trimSpaces(param.slice(0, eq));
      if (token === 'q') clause.q = parseQ(param.slice(eq + 1));
      else clause.params.set(token, trimSpaces(param.slice(eq + 1)));
    }
    clauses.push(clause);
  }
  // sort.Sort on goautoneg's Less; Go sorts slices this short with an insertion sort, so ties
  // keep the header's order. Same algorithm, same (non-transitive) comparison.
  const less = (a: AcceptClause, b: AcceptClause) =>
    a.q > b.q || (a.type !== '*' && b.type === '*') || (a.subType !== '*' && b.subType === '*');
  for (let i = 1; i < clauses.length; i++) {
    for (let j = i; j > 0 && less(clauses[j]!, clauses[j - 1]!); j--) {
      [clauses[j - 1], clauses[j]] = [clauses[j]!, clauses[j - 1]!];
    }
  }
  return clauses;
}

type Conversion = { kind: string; group: string; version: string } | null;

/** acceptMediaTypeOptions + RequestScope.AllowsMediaTypeTransform: the conversion, or false. */
function acceptClause(
  params: Map<string, string>,
  served: (typeof SERVED_MEDIA_TYPES)[number],
): Conversion | false {
  let convert: Conversion = null;
  for (const [k, v] of params) {
    if (k === 'as' || k === 'g' || k === 'v') {
      convert ??= { kind: '', group: '', version: '' };
      if (k === 'as') convert.kind = v;
      else if (k === 'g') convert.group = v;
      else convert.version = v;
    } else if (k === 'stream') {
      if (v !== '' && (!served.stream || v !== 'watch')) return false;
    } else if (k === 'sv') {
      if (v !== '' && v !== 'v1') return false;
    }
  }
  if (!convert) return null;
  if (convert.group !== 'meta.k8s.io' || (convert.version !== 'v1' && convert.version !== 'v1beta1'))
    return false;
  if (convert.kind === 'Table')
    return served.subType === 'json' || served.subType === 'yaml' ? convert : false;
  return convert.kind === 'PartialObjectMetadata' || convert.kind === 'PartialObjectMetadataList'
    ? convert
    : false;
}

/**
 * null unless the Accept header's winning clause (kube-apiserver's negotiation: highest q first,
 * then the header's order) asks for a meta.k8s.io/v1 or v1beta1 Table. Also null when the winner is
 * another conversion (PartialObjectMetadata) or nothing is acceptable (where the API server answers
 * 406). Throws HttpError 400 for an includeObject other than None, Metadata, Object or empty.
 */
export function tableRequest(accept: string | undefined, params: URLSearchParams): TableRequest | null {
  if (!accept) return null;
  for (const clause of parseAccept(accept)) {
    for (const served of SERVED_MEDIA_TYPES) {
      const matches =
        (clause.type === served.type && (clause.subType === served.subType || clause.subType === '*')) ||
        (clause.type === '*' && clause.subType === '*');
      if (!matches) continue;
      const convert = acceptClause(clause.params, served);
      if (convert === false) continue;
      if (convert?.kind !== 'Table') return null;
      return { version: convert.version as TableVersion, includeObject: includeObject(params) };
    }
  }
  return null;
}

function includeObject(params: URLSearchParams): IncludeObject {
  const value = params.get('includeObject') ?? '';
  if (value === '') return 'Metadata';
  if (value === 'None' || value === 'Metadata' || value === 'Object') return value;
  throw new HttpError(
    400,
    'BadRequest',
    `Unable to convert to Table as requested: includeObject: Invalid value: ${JSON.stringify(value)}: must be 'Metadata', 'Object', 'None', or empty`,
  );
}

// --- duration.HumanDuration ----------------------------------------------------------------

/** apimachinery's duration.HumanDuration: ~2-3 significant figures (`119s`, `3m10s`, `2d1h`, `2y1d`). */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  // Up to two seconds in the future counts as now (clock skew between machines).
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.trunc(ms / 60_000);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.trunc(ms / 3_600_000);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  const days = Math.trunc(hours / 24);
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${days}d` : `${days}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.trunc(days / 365);
  if (hours < 24 * 365 * 8) {
    const dy = days % 365;
    return dy === 0 ? `${years}y` : `${years}y${dy}d`;
  }
  return `${years}y`;
}

// --- reading objects as the printers' Go types would decode them ----------------------------

type Fields = Record<string, unknown>;
const fields = (v: unknown): Fields =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Fields) : {};
/** A pointer or struct field that Go would decode as non-nil. */
const present = (v: unknown): boolean => typeof v === 'object' && v !== null;
const items = (v: unknown): unknown[] => (Array.isArray(v) ? (v as unknown[]) : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const int = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? Math.trunc(v) : 0);

/** metav1.Time{}: what an unset timestamp is, and what it prints as in RFC 3339. */
const ZERO_TIME = Date.parse('0001-01-01T00:00:00Z');
/** metav1.Time / MicroTime in ms since the epoch; null for the zero time (unset). */
function time(v: unknown): number | null {
  if (typeof v !== 'string' || v === '') return null;
  const t = Date.parse(v);
  return Number.isNaN(t) || t === ZERO_TIME ? null : t;
}

function since(t: number | null, now: Date): string {
  return t === null ? '<unknown>' : humanDuration(now.getTime() - t);
}

const later = (a: number | null, b: number | null): number | null =>
  b === null ? a : a === null || a < b ? b : a;

// --- column definitions ------------------------------------------------------------------

// The descriptions are the SwaggerDoc strings of k8s.io/api and apimachinery (release-1.35) the
// printers reference; kubectl shows them in `kubectl explain`-like help, never in the table.
const DOC = {
  name: 'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names',
  creationTimestamp:
    'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata',
  podIP:
    'podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.',
  nodeName:
    'NodeName indicates in which node this pod is scheduled. If empty, this pod is a candidate for scheduling by the scheduler defined in schedulerName. Once this field is set, the kubelet for this node becomes responsible for the lifecycle of this pod. This field should not be used to express a desire for the pod to be scheduled on a specific node. https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#nodename',
  nominatedNodeName:
    'nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is scheduled.',
  readinessGates:
    'If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to "True" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates',
  serviceType:
    'type determines how the Service is exposed. Defaults to ClusterIP. Valid options are ExternalName, ClusterIP, NodePort, and LoadBalancer. "ClusterIP" allocates a cluster-internal IP address for load-balancing to endpoints. Endpoints are determined by the selector or if that is not specified, by manual construction of an Endpoints object or EndpointSlice objects. If clusterIP is "None", no virtual IP is allocated and the endpoints are published as a set of endpoints rather than a virtual IP. "NodePort" builds on ClusterIP and allocates a port on every node which routes to the same endpoints as the clusterIP. "LoadBalancer" builds on NodePort and creates an external load-balancer (if supported in the current cloud) which routes to the same endpoints as the clusterIP. "ExternalName" aliases this service to the specified externalName. Several other fields do not apply to ExternalName services. More info: https://kubernetes.io/docs/concepts/services-networking/service/#publishing-services-service-types',
  clusterIP:
    'clusterIP is the IP address of the service and is usually assigned randomly. If an address is specified manually, is in-range (as per system configuration), and is not in use, it will be allocated to the service; otherwise creation of the service will fail. This field may not be changed through updates unless the type field is also being changed to ExternalName (which requires this field to be blank) or the type field is being changed from ExternalName (in which case this field may optionally be specified, as describe above).  Valid values are "None", empty string (""), or a valid IP address. Setting this to "None" makes a "headless service" (no virtual IP), which is useful when direct endpoint connections are preferred and proxying is not required.  Only applies to types ClusterIP, NodePort, and LoadBalancer. If this field is specified when creating a Service of type ExternalName, creation will fail. This field will be wiped when updating a Service to type ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies',
  externalIPs:
    'externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.  These IPs are not managed by Kubernetes.  The user is responsible for ensuring that traffic arrives at a node with this IP.  A common example is external load-balancers that are not part of the Kubernetes system.',
  ports:
    'The list of ports that are exposed by this service. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies',
  selector:
    'Route service traffic to pods with label keys and values matching this selector. If empty or not present, the service is assumed to have an external process managing its endpoints, which Kubernetes will not modify. Only applies to types ClusterIP, NodePort, and LoadBalancer. Ignored if type is ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/',
  kubeletVersion: 'Kubelet Version reported by the node.',
  addresses:
    "List of addresses reachable to the node. Queried from cloud provider, if available. More info: https://kubernetes.io/docs/reference/node/node-status/#addresses Note: This field is declared as mergeable, but the merge key is not sufficiently unique, which can cause data corruption when it is merged. Callers should instead use a full-replacement patch. See https://pr.k8s.io/79391 for an example. Consumers should assume that addresses can change during the lifetime of a Node. However, there are some exceptions where this may not be possible, such as Pods that inherit a Node's address in its own status or consumers of the downward API (status.hostIP).",
  osImage: 'OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).',
  kernelVersion: "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).",
  containerRuntimeVersion:
    'ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).',
  lastTimestamp: 'The time at which the most recent occurrence of this event was recorded.',
  eventType: 'Type of this event (Normal, Warning), new types could be added in the future',
  reason:
    "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
  involvedObject: 'The object that this event is about.',
  fieldPath:
    'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: "spec.containers{name}" (where "name" refers to the name of the container that triggered the event) or if no container name is specified "spec.containers[2]" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.',
  source: 'The component reporting this event. Should be a short machine understandable string.',
  message: 'A human-readable description of the status of this operation.',
  firstTimestamp: 'The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)',
  count: 'The number of times this event has occurred.',
  holderIdentity:
    'holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field.',
} as const;

const column = (
  name: string,
  description: string,
  opts: { type?: string; format?: string; priority?: number } = {},
): TableColumnDefinition => ({
  name,
  type: opts.type ?? 'string',
  format: opts.format ?? '',
  description,
  priority: opts.priority ?? 0,
});
const nameColumn = column('Name', DOC.name, { format: 'name' });
const ageColumn = column('Age', DOC.creationTimestamp);
const WIDE = { priority: 1 } as const;

// --- printers ----------------------------------------------------------------------------

type RowCondition = { type: 'Completed'; status: 'True'; reason: string; message: string };
interface PrintedRow {
  cells: unknown[];
  conditions?: RowCondition[];
}
interface Printer {
  columns: readonly TableColumnDefinition[];
  print(o: KubeObject, now: Date): PrintedRow;
}

const age = (o: KubeObject, now: Date) => since(time(o.metadata.creationTimestamp), now);
const name = (o: KubeObject) => str(o.metadata.name);

const podSucceeded: RowCondition[] = [
  { type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' },
];
const podFailed: RowCondition[] = [
  { type: 'Completed', status: 'True', reason: 'Failed', message: 'The pod failed.' },
];

/** k8s.io/kubernetes/pkg/util/node NodeUnreachablePodReason. */
const NODE_UNREACHABLE_POD_REASON = 'NodeLost';

function lastTerminationFinish(status: Fields): number | null {
  const terminated = fields(status['lastState'])['terminated'];
  return present(terminated) ? time(fields(terminated)['finishedAt']) : null;
}

const podPrinter: Printer = {
  columns: [
    nameColumn,
    column('Ready', 'The aggregate readiness state of this pod for accepting traffic.'),
    column('Status', 'The aggregate status of the containers in this pod.'),
    column(
      'Restarts',
      'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.',
    ),
    ageColumn,
    column('IP', DOC.podIP, WIDE),
    column('Node', DOC.nodeName, WIDE),
    column('Nominated Node', DOC.nominatedNodeName, WIDE),
    column('Readiness Gates', DOC.readinessGates, WIDE),
  ],
  print(pod, now) {
    const spec = fields(pod['spec']);
    const status = fields(pod['status']);
    const conditions = items(status['conditions']).map(fields);
    const initSpecs = items(spec['initContainers']).map(fields);
    let restarts = 0;
    let restartableInitContainerRestarts = 0;
    let totalContainers = items(spec['containers']).length;
    let readyContainers = 0;
    let lastRestartDate: number | null = null;
    let lastRestartableInitContainerRestartDate: number | null = null;

    const podPhase = str(status['phase']);
    let reason = str(status['reason']) || podPhase;
    for (const c of conditions) {
      if (c['type'] === 'PodScheduled' && c['reason'] === 'SchedulingGated') reason = 'SchedulingGated';
    }
    const row: PrintedRow = { cells: [] };
    if (podPhase === 'Succeeded') row.conditions = podSucceeded;
    else if (podPhase === 'Failed') row.conditions = podFailed;

    // podutil.IsRestartableInitContainer: a sidecar (restartPolicy Always) counts as a container.
    const restartable = new Set<string>();
    for (const c of initSpecs) {
      if (c['restartPolicy'] === 'Always') {
        restartable.add(str(c['name']));
        totalContainers++;
      }
    }

    let initializing = false;
    const initStatuses = items(status['initContainerStatuses']).map(fields);
    for (const [i, container] of initStatuses.entries()) {
      const state = fields(container['state']);
      const terminated = present(state['terminated']) ? fields(state['terminated']) : null;
      const waiting = present(state['waiting']) ? fields(state['waiting']) : null;
      const isRestartable = restartable.has(str(container['name']));
      restarts += int(container['restartCount']);
      lastRestartDate = later(lastRestartDate, lastTerminationFinish(container));
      if (isRestartable) {
        restartableInitContainerRestarts += int(container['restartCount']);
        lastRestartableInitContainerRestartDate = later(
          lastRestartableInitContainerRestartDate,
          lastTerminationFinish(container),
        );
      }
      if (terminated && int(terminated['exitCode']) === 0) continue;
      if (isRestartable && container['started'] === true) {
        if (container['ready'] === true) readyContainers++;
        continue;
      }
      if (terminated) {
        // initialization failed
        const terminatedReason = str(terminated['reason']);
        if (terminatedReason === '') {
          reason =
            int(terminated['signal']) !== 0
              ? `Init:Signal:${int(terminated['signal'])}`
              : `Init:ExitCode:${int(terminated['exitCode'])}`;
        } else {
          reason = `Init:${terminatedReason}`;
        }
      } else if (waiting && str(waiting['reason']) !== '' && waiting['reason'] !== 'PodInitializing') {
        reason = `Init:${str(waiting['reason'])}`;
      } else {
        reason = `Init:${i}/${initSpecs.length}`;
      }
      initializing = true;
      break;
    }

    const initialized = conditions.find((c) => c['type'] === 'Initialized')?.['status'] === 'True';
    if (!initializing || initialized) {
      restarts = restartableInitContainerRestarts;
      lastRestartDate = lastRestartableInitContainerRestartDate;
      let hasRunning = false;
      const statuses = items(status['containerStatuses']).map(fields);
      for (let i = statuses.length - 1; i >= 0; i--) {
        const container = statuses[i]!;
        const state = fields(container['state']);
        const terminated = present(state['terminated']) ? fields(state['terminated']) : null;
        const waiting = present(state['waiting']) ? fields(state['waiting']) : null;
        restarts += int(container['restartCount']);
        lastRestartDate = later(lastRestartDate, lastTerminationFinish(container));
        if (waiting && str(waiting['reason']) !== '') {
          reason = str(waiting['reason']);
        } else if (terminated && str(terminated['reason']) !== '') {
          reason = str(terminated['reason']);
        } else if (terminated) {
          reason =
            int(terminated['signal']) !== 0
              ? `Signal:${int(terminated['signal'])}`
              : `ExitCode:${int(terminated['exitCode'])}`;
        } else if (container['ready'] === true && present(state['running'])) {
          hasRunning = true;
          readyContainers++;
        }
      }
      // Back to Running if at least one container still runs.
      if (reason === 'Completed' && hasRunning) {
        const ready = conditions.some((c) => c['type'] === 'Ready' && c['status'] === 'True');
        reason = ready ? 'Running' : 'NotReady';
      }
    }

    const deleting = str(pod.metadata['deletionTimestamp']) !== '';
    if (deleting && status['reason'] === NODE_UNREACHABLE_POD_REASON) reason = 'Unknown';
    else if (deleting && podPhase !== 'Succeeded' && podPhase !== 'Failed') reason = 'Terminating';

    const restartsCell =
      restarts !== 0 && lastRestartDate !== null
        ? `${restarts} (${since(lastRestartDate, now)} ago)`
        : String(restarts);

    // The internal Pod's podIPs: podIP wins when both are set (v1 → internal conversion).
    const podIP = str(status['podIP']) || str(fields(items(status['podIPs'])[0])['ip']) || '<none>';
    const readinessGates = items(spec['readinessGates']).map((g) => str(fields(g)['conditionType']));
    let gates = '<none>';
    if (readinessGates.length > 0) {
      const met = readinessGates.filter(
        (type) => conditions.find((c) => c['type'] === type)?.['status'] === 'True',
      ).length;
      gates = `${met}/${readinessGates.length}`;
    }
    row.cells = [
      name(pod),
      `${readyContainers}/${totalContainers}`,
      reason,
      restartsCell,
      age(pod, now),
      podIP,
      str(spec['nodeName']) || '<none>',
      str(status['nominatedNodeName']) || '<none>',
      gates,
    ];
    return row;
  },
};

function nodeAddress(node: KubeObject, type: string): string {
  const found = items(fields(node['status'])['addresses'])
    .map(fields)
    .find((a) => a['type'] === type);
  return found ? str(found['address']) : '<none>';
}

/** findNodeRoles: node-role.kubernetes.io/<role> labels and a kubernetes.io/role=<role> label. */
function nodeRoles(node: KubeObject): string[] {
  const roles = new Set<string>();
  for (const [k, v] of Object.entries(fields(node.metadata['labels']))) {
    if (k.startsWith('node-role.kubernetes.io/')) {
      const role = k.slice('node-role.kubernetes.io/'.length);
      if (role) roles.add(role);
    } else if (k === 'kubernetes.io/role' && str(v) !== '') {
      roles.add(str(v));
    }
  }
  return [...roles].sort();
}

const nodePrinter: Printer = {
  columns: [
    nameColumn,
    column('Status', 'The status of the node'),
    column('Roles', 'The roles of the node'),
    ageColumn,
    column('Version', DOC.kubeletVersion),
    column('Internal-IP', DOC.addresses, WIDE),
    column('External-IP', DOC.addresses, WIDE),
    column('OS-Image', DOC.osImage, WIDE),
    column('Kernel-Version', DOC.kernelVersion, WIDE),
    column('Container-Runtime', DOC.containerRuntimeVersion, WIDE),
  ],
  print(node, now) {
    const status = fields(node['status']);
    const nodeInfo = fields(status['nodeInfo']);
    // Only the Ready condition counts (the last one, should there be several).
    const ready = items(status['conditions'])
      .map(fields)
      .filter((c) => c['type'] === 'Ready')
      .at(-1);
    const states = ready ? [ready['status'] === 'True' ? 'Ready' : 'NotReady'] : ['Unknown'];
    if (fields(node['spec'])['unschedulable'] === true) states.push('SchedulingDisabled');
    return {
      cells: [
        name(node),
        states.join(','),
        nodeRoles(node).join(',') || '<none>',
        age(node, now),
        str(nodeInfo['kubeletVersion']),
        nodeAddress(node, 'InternalIP'),
        nodeAddress(node, 'ExternalIP'),
        str(nodeInfo['osImage']) || '<unknown>',
        str(nodeInfo['kernelVersion']) || '<unknown>',
        str(nodeInfo['containerRuntimeVersion']) || '<unknown>',
      ],
    };
  },
};

const eventPrinter: Printer = {
  columns: [
    column('Last Seen', DOC.lastTimestamp),
    column('Type', DOC.eventType),
    column('Reason', DOC.reason),
    column('Object', DOC.involvedObject),
    column('Subobject', DOC.fieldPath, WIDE),
    column('Source', DOC.source, WIDE),
    column('Message', DOC.message),
    column('First Seen', DOC.firstTimestamp, WIDE),
    column('Count', DOC.count, WIDE),
    column('Name', DOC.name, { format: 'name', priority: 1 }),
  ],
  print(event, now) {
    const first = time(event['firstTimestamp']);
    const firstSeen = first === null ? since(time(event['eventTime']), now) : since(first, now);
    const last = time(event['lastTimestamp']);
    let lastSeen = last === null ? firstSeen : since(last, now);
    let count = int(event['count']);
    if (present(event['series'])) {
      const series = fields(event['series']);
      lastSeen = since(time(series['lastObservedTime']), now);
      count = int(series['count']);
    } else if (count === 0) {
      count = 1; // singleton events of the events.k8s.io API carry no count
    }
    const involved = fields(event['involvedObject']);
    const kind = str(involved['kind']).toLowerCase();
    const target = str(involved['name']) ? `${kind}/${str(involved['name'])}` : kind;
    // formatEventSource: source, else the reporting controller and instance.
    const source = fields(event['source']);
    const component = str(source['component']) || str(event['reportingComponent']);
    const host = str(source['host']) || str(event['reportingInstance']);
    return {
      cells: [
        lastSeen,
        str(event['type']),
        str(event['reason']),
        target,
        str(involved['fieldPath']),
        host ? `${component}, ${host}` : component,
        str(event['message']).trim(),
        firstSeen,
        count,
        name(event),
      ],
    };
  },
};

const namespacePrinter: Printer = {
  columns: [nameColumn, column('Status', 'The status of the namespace'), ageColumn],
  print: (ns, now) => ({ cells: [name(ns), str(fields(ns['status'])['phase']), age(ns, now)] }),
};

/** labels.FormatLabels: sorted `k=v` pairs, `<none>` when empty. */
function formatLabels(map: unknown): string {
  const pairs = Object.entries(fields(map))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${str(v)}`);
  return pairs.join(',') || '<none>';
}

/** getServiceExternalIP, wide (the API server prints wide: load balancer IPs are not clipped). */
function serviceExternalIP(spec: Fields, status: Fields): string {
  const externalIPs = items(spec['externalIPs']).map(str);
  switch (str(spec['type'])) {
    case 'ClusterIP':
    case 'NodePort':
      return externalIPs.length > 0 ? externalIPs.join(',') : '<none>';
    case 'LoadBalancer': {
      const ingress = items(fields(status['loadBalancer'])['ingress']).map(fields);
      const lb = [...new Set(ingress.map((i) => str(i['ip']) || str(i['hostname'])).filter(Boolean))]
        .sort()
        .join(',');
      if (externalIPs.length > 0) return [...(lb ? lb.split(',') : []), ...externalIPs].join(',');
      return lb || '<pending>';
    }
    case 'ExternalName':
      return str(spec['externalName']);
    default:
      return '<unknown>';
  }
}

const servicePrinter: Printer = {
  columns: [
    nameColumn,
    column('Type', DOC.serviceType),
    column('Cluster-IP', DOC.clusterIP),
    column('External-IP', DOC.externalIPs),
    column('Port(s)', DOC.ports),
    ageColumn,
    column('Selector', DOC.selector, WIDE),
  ],
  print(svc, now) {
    const spec = fields(svc['spec']);
    // The internal Service's clusterIPs: clusterIP alone fills it (v1 → internal conversion).
    const clusterIP = str(items(spec['clusterIPs'])[0]) || str(spec['clusterIP']) || '<none>';
    const ports = items(spec['ports'])
      .map(fields)
      .map((p) =>
        int(p['nodePort']) > 0
          ? `${int(p['port'])}:${int(p['nodePort'])}/${str(p['protocol'])}`
          : `${int(p['port'])}/${str(p['protocol'])}`,
      )
      .join(',');
    return {
      cells: [
        name(svc),
        str(spec['type']),
        clusterIP,
        serviceExternalIP(spec, fields(svc['status'])),
        ports || '<none>',
        age(svc, now),
        formatLabels(spec['selector']),
      ],
    };
  },
};

const leasePrinter: Printer = {
  columns: [nameColumn, column('Holder', DOC.holderIdentity), ageColumn],
  print: (lease, now) => ({
    cells: [name(lease), str(fields(lease['spec'])['holderIdentity']), age(lease, now)],
  }),
};

// resource.k8s.io (printers.go: printResourceClaim, printResourceClaimTemplate, printResourceSlice,
// printDeviceTaint for DeviceTaintRules; DeviceClass has no printer of its own columns beyond name
// and age). The DeviceTaint descriptions are k8s.io/api resource/v1's of release-1.37.
const DRA_DOC = {
  claimState: 'A summary of the current state (allocated, pending, reserved, etc.).',
  sliceNodeName:
    'NodeName identifies the node which provides the resources in this pool. A field selector can be used to list only ResourceSlice objects belonging to a certain node.\n\nThis field can be used to limit access from nodes to ResourceSlices with the same node name. It also indicates to autoscalers that adding new nodes of the same type as some old node might also make new resources available.\n\nExactly one of NodeName, NodeSelector, AllNodes, and PerDeviceNodeSelection must be set. This field is immutable.',
  sliceDriver:
    'Driver identifies the DRA driver providing the capacity information. A field selector can be used to list only ResourceSlice objects with a certain driver name.\n\nMust be a DNS subdomain and should end with a DNS domain owned by the vendor of the driver. It should use only lower case characters. This field is immutable.',
  poolName:
    'Name is used to identify the pool. For node-local devices, this is often the node name, but this is not required.\n\nIt must not be longer than 253 characters and must consist of one or more DNS sub-domains separated by slashes. This field is immutable.',
  taintKey: 'The taint key to be applied to a device. Must be a label name.',
  taintValue: 'The taint value corresponding to the taint key. Must be a label value.',
  taintEffect:
    'The effect of the taint on claims that do not tolerate the taint and through such claims on the pods using them.\n\nValid effects are None, NoSchedule and NoExecute. PreferNoSchedule as used for nodes is not valid here. More effects may get added in the future. Consumers must treat unknown effects like None.',
  taintTimeAdded:
    'TimeAdded represents the time at which the taint was added or (only in a DeviceTaintRule) the effect was modified. Added automatically during create or update if not set.\n\nIn addition, in a DeviceTaintRule a value provided during an update gets replaced with the current time if the provided value is the same as the old one and the new effect is different. Changing the key and/or value while keeping the effect unchanged is possible and does not update the time stamp because the eviction which uses it is either already started (NoExecute) or not started yet (NoEffect, NoSchedule).',
} as const;

/** resourceClaimState: deleted, pending or allocated, and reserved. */
export function resourceClaimState(claim: KubeObject): string {
  const status = fields(claim['status']);
  const states: string[] = [];
  const deleted = claim.metadata['deletionTimestamp'] !== undefined;
  if (deleted) states.push('deleted');
  if (!present(status['allocation'])) {
    if (!deleted) states.push('pending');
  } else states.push('allocated');
  if (items(status['reservedFor']).length > 0) states.push('reserved');
  return states.join(',');
}

const nameAgePrinter: Printer = {
  columns: [nameColumn, ageColumn],
  print: (o, now) => ({ cells: [name(o), age(o, now)] }),
};

const resourceClaimPrinter: Printer = {
  columns: [nameColumn, column('State', DRA_DOC.claimState), ageColumn],
  print: (claim, now) => ({ cells: [name(claim), resourceClaimState(claim), age(claim, now)] }),
};

const resourceSlicePrinter: Printer = {
  columns: [
    nameColumn,
    column('Node', DRA_DOC.sliceNodeName),
    column('Driver', DRA_DOC.sliceDriver),
    column('Pool', DRA_DOC.poolName),
    ageColumn,
  ],
  print: (slice, now) => {
    const spec = fields(slice['spec']);
    return {
      cells: [
        name(slice),
        str(spec['nodeName']),
        str(spec['driver']),
        str(fields(spec['pool'])['name']),
        age(slice, now),
      ],
    };
  },
};

/**
 * printDeviceTaint: the taint, not the selector ("They could be lengthy … the admin could pick a
 * descriptive name"); TIMEADDED empty when the taint has none, like AGE otherwise.
 */
const deviceTaintRulePrinter: Printer = {
  columns: [
    nameColumn,
    column('Key', DRA_DOC.taintKey),
    column('Value', DRA_DOC.taintValue),
    column('Effect', DRA_DOC.taintEffect),
    column('TimeAdded', DRA_DOC.taintTimeAdded),
    ageColumn,
  ],
  print: (rule, now) => {
    const taint = fields(fields(rule['spec'])['taint']);
    const added = taint['timeAdded'];
    return {
      cells: [
        name(rule),
        str(taint['key']),
        str(taint['value']),
        str(taint['effect']),
        typeof added === 'string' ? since(time(added), now) : '',
        age(rule, now),
      ],
    };
  },
};

const PRINTERS = new Map<string, Printer>([
  ['resource.k8s.io/deviceclasses', nameAgePrinter],
  ['resource.k8s.io/devicetaintrules', deviceTaintRulePrinter],
  ['resource.k8s.io/resourceclaims', resourceClaimPrinter],
  ['resource.k8s.io/resourceclaimtemplates', nameAgePrinter],
  ['resource.k8s.io/resourceslices', resourceSlicePrinter],
  ['/namespaces', namespacePrinter],
  ['/nodes', nodePrinter],
  ['/pods', podPrinter],
  ['/events', eventPrinter],
  ['/services', servicePrinter],
  ['coordination.k8s.io/leases', leasePrinter],
]);

/** rest.NewDefaultTableConvertor, for kinds without a printer. */
const defaultColumns: readonly TableColumnDefinition[] = [
  nameColumn,
  column('Created At', DOC.creationTimestamp, { type: 'date' }),
];

/** metav1.Time's `.UTC().Format(time.RFC3339)`; the zero time for an unset timestamp. */
function rfc3339(v: unknown): string {
  return new Date(time(v) ?? ZERO_TIME).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

// --- the Table --------------------------------------------------------------------------

/** The column definitions the API server sends for a resource. */
export function tableColumns(resource: ResourceInfo): readonly TableColumnDefinition[] {
  return PRINTERS.get(`${resource.group}/${resource.resource}`)?.columns ?? defaultColumns;
}

/** asTable's includeObject: the full object, its PartialObjectMetadata, or null (None). */
function rowObject(resource: ResourceInfo, o: KubeObject, req: TableRequest): unknown {
  if (req.includeObject === 'Object') {
    const { kind: _kind, apiVersion: _apiVersion, ...rest } = o;
    return { kind: resource.kind, apiVersion: groupVersion(resource), ...rest };
  }
  // The bookmark that ends a watch's initial events keeps its annotation whatever was asked.
  const initialEventsEnd = fields(o.metadata['annotations'])['k8s.io/initial-events-end'] === 'true';
  if (req.includeObject === 'Metadata' || initialEventsEnd) {
    return { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${req.version}`, metadata: o.metadata };
  }
  // RawExtension{Object: nil} marshals as null; `omitempty` does not drop a struct.
  return null;
}

function buildTable(
  resource: ResourceInfo,
  objects: readonly KubeObject[],
  req: TableRequest,
  listMeta: TableListMeta,
  now: Date,
  headers: boolean,
): Record<string, unknown> {
  const printer = PRINTERS.get(`${resource.group}/${resource.resource}`);
  const rows = objects.map((o) => {
    const printed: PrintedRow = printer
      ? printer.print(o, now)
      : { cells: [str(o.metadata.name), rfc3339(o.metadata.creationTimestamp)] };
    return {
      cells: printed.cells,
      ...(printed.conditions ? { conditions: printed.conditions } : {}),
      object: rowObject(resource, o, req),
    };
  });
  const metadata: Record<string, string> = {};
  if (listMeta.resourceVersion) metadata['resourceVersion'] = listMeta.resourceVersion;
  if (listMeta.continue) metadata['continue'] = listMeta.continue;
  return {
    kind: 'Table',
    apiVersion: `meta.k8s.io/${req.version}`,
    metadata,
    // Go's nil slices: no header on later watch events; the default convertor's rows stay nil
    // for an empty list, while the printers always start from an empty slice.
    columnDefinitions: headers ? (printer?.columns ?? defaultColumns) : null,
    rows: printer || rows.length > 0 ? rows : null,
  };
}

/**
 * A Table for a list (its items, with or without kind/apiVersion: lists strip them) or for a single
 * object (pass its resourceVersion as listMeta.resourceVersion, as the API server reports it).
 */
export function toTable(
  resource: ResourceInfo,
  objects: readonly KubeObject[],
  req: TableRequest,
  listMeta: TableListMeta,
  now: Date,
): Record<string, unknown> {
  return buildTable(resource, objects, req, listMeta, now, true);
}

/**
 * The object of one watch event as a one-row Table. The API server sends columnDefinitions with
 * the first event of a watch only (later ones carry `null`; kubectl keeps the first header): pass
 * `{ headers: false }` after the first event, or use watchTableTransform, which tracks that.
 */
export function toWatchTable(
  resource: ResourceInfo,
  object: KubeObject,
  req: TableRequest,
  now: Date,
  opts: { headers?: boolean } = {},
): Record<string, unknown> {
  const resourceVersion = str(object.metadata.resourceVersion);
  return buildTable(resource, [object], req, { resourceVersion }, now, opts.headers ?? true);
}

/**
 * One watch's transform of event objects (the API server's watchEmbeddedEncoder): Tables with the
 * header on the first event only; a Status (an ERROR event's object) passes unchanged, and like any
 * event it uses up the header.
 */
export function watchTableTransform(
  resource: ResourceInfo,
  req: TableRequest,
): (object: unknown, now: Date) => unknown {
  let headers = true;
  return (object, now) => {
    const isStatus = fields(object)['kind'] === 'Status';
    const out = isStatus ? object : toWatchTable(resource, object as KubeObject, req, now, { headers });
    headers = false;
    return out;
  };
}
