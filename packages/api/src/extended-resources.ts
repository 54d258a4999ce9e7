// Extended resources by the API that serves them on a node: a device plugin (the Node's allocatable
// lists the name) or a DRA driver (a DeviceClass maps the name, KEP-5004, and the scheduler gives a
// pod asking for it a special claim). The per-node half of the migration view: the dashboard and
// `kubectl plugboard migration` put the nodes side by side. Every field is observed from the Node,
// the DeviceClasses, the pods' `status.extendedResourceClaimStatus` and the special claims
// (annotated `resource.kubernetes.io/extended-resource-claim: "true"`); nothing is inferred from
// CEL selectors. Pure types; documented in docs/API.md ("Extended resources by API").

/**
 * Who serves the name on this node for a new pod, as the scheduler decides (1.37,
 * `extendeddynamicresources.go`): 'device-plugin' while the Node's allocatable has it (> 0);
 * else 'dra' when a DeviceClass maps it and the node publishes DRA devices (the class's CEL selectors
 * are not evaluated: whether they select this node's devices shows in `drivers` once a pod got one);
 * else 'none' (a pod asking for it would stay Pending here). A name both a device plugin and a
 * DeviceClass serve stays with the device plugin.
 */
export type ExtendedResourceServedBy = 'device-plugin' | 'dra' | 'none';

export interface ExtendedResourceView {
  /** The extended resource name, e.g. "plugboard.example/gpu". */
  name: string;
  servedBy: ExtendedResourceServedBy;
  /**
   * The Node's status for the name (capacity and allocatable as the API server has them, else as
   * the kubelet reports them through this gateway); null when the Node does not list it.
   */
  nodeStatus: { capacity: number; allocatable: number } | null;
  /**
   * DeviceClasses mapping the name (`spec.extendedResourceName`, or the implicit
   * `deviceclass.resource.kubernetes.io/<class>`), sorted; null when the gateway cannot read
   * DeviceClasses (not watched, or not served: then 'dra' is never said).
   */
  deviceClasses: string[] | null;
  /**
   * The DeviceClass the scheduler picks for a new pod among `deviceClasses` (the newest, then the
   * smaller name); null when none or not known.
   */
  deviceClass: string | null;
  /** DRA drivers of the devices this node's special claims for the name got, sorted (observed, not from CEL). */
  drivers: string[];
  /** The pods on this node whose containers ask for the name, by pod key then container. */
  pods: ExtendedResourcePod[];
}

export interface ExtendedResourcePod {
  /** `${namespace}/${name}` */
  pod: string;
  container: string;
  /** The container's request (its limit when it gives none) of the name. */
  count: number;
  /**
   * How the pod holds it: 'dra' when its `extendedResourceClaimStatus` maps the container's request
   * to a request of the special claim; 'device-plugin' when the kubelet's PodResources lists devices
   * of the name for the container; 'unknown' when neither (e.g. still being admitted).
   */
  via: 'device-plugin' | 'dra' | 'unknown';
  /** The special claim (`${namespace}/${name}`) when via 'dra'. */
  claim: string | null;
  /** The claim's request serving the container (`container-<i>-request-<j>`) when via 'dra'. */
  request: string | null;
  /** Device keys: `${resource}/${id}` (device plugin) or `${driver}/${pool}/${device}` (DRA). */
  devices: string[];
}
