// The cluster half of the migration view: the nodes' `extendedResources` (extended-resources.ts)
// joined per extended resource name — which nodes serve it through a device plugin, which through
// DRA (a DeviceClass's `extendedResourceName`, KEP-5004) and which not at all, the pods holding it
// each way with the special claims the scheduler generated, and what is left to move (the pods still
// holding it through a device plugin). One pure function for the dashboard (GET /api/migration and
// its page) and `kubectl plugboard migration`; it adds nothing the gateways did not observe, and
// says where they observed nothing (a node with no data, a gateway that cannot read DeviceClasses).
import type {
  ExtendedResourcePod,
  ExtendedResourceServedBy,
  ExtendedResourceView,
} from './extended-resources.ts';

/** The implicit extended resource name every DeviceClass answers (`deviceclass.resource.kubernetes.io/<class>`). */
export const IMPLICIT_EXTENDED_RESOURCE_PREFIX = 'deviceclass.resource.kubernetes.io/';

/** One node's input: its gateway's `extendedResources`, undefined when there is none to read. */
export interface MigrationNodeInput {
  node: string;
  extendedResources: Readonly<Record<string, ExtendedResourceView>> | undefined;
}

/** One node's row for one name: the node's view without its pods (they are in `pods`, with the node). */
export type MigrationNodeRow = Omit<ExtendedResourceView, 'name' | 'pods'> & { node: string };

export type MigrationPod = ExtendedResourcePod & { node: string };

export interface MigrationResource {
  name: string;
  /** A DeviceClass's implicit name (`deviceclass.resource.kubernetes.io/<class>`), which no device plugin can serve. */
  implicit: boolean;
  /**
   * Some node serves the name through DRA or has a DeviceClass mapping it: the move has started.
   * False for a name device plugins alone serve wherever DeviceClasses could be read.
   */
  mapped: boolean;
  /** Per node that knows the name, by node name. */
  nodes: MigrationNodeRow[];
  /** Node names by who serves the name for a new pod there, each sorted. */
  servedBy: Record<ExtendedResourceServedBy, string[]>;
  /**
   * Nodes whose gateway cannot read DeviceClasses (`deviceClasses: null`): whether a DeviceClass maps
   * the name there is unknown, so 'none' there may not be the scheduler's answer.
   */
  deviceClassesUnknown: string[];
  /** Every container asking for the name, by node, pod, container. */
  pods: MigrationPod[];
  /** Left to move: the containers still holding the name through a device plugin. */
  leftToMove: MigrationPod[];
  /** Pods (keys) among `leftToMove`, and the nodes they are on, each sorted. */
  leftToMovePods: string[];
  leftToMoveNodes: string[];
  /** Containers asking for the name that hold it neither way yet (being admitted, or Pending). */
  notHolding: MigrationPod[];
}

export interface ClusterMigration {
  /** Explicit names first, then the implicit ones, each sorted. */
  resources: MigrationResource[];
  /** Nodes with no extended-resource data (gateway not reached yet, or older than the view), sorted. */
  notObserved: string[];
}

const byName = (a: string, b: string): number => a.localeCompare(b);
const uniqueSorted = (xs: Iterable<string>): string[] => [...new Set(xs)].sort(byName);

export function clusterMigration(inputs: readonly MigrationNodeInput[]): ClusterMigration {
  const notObserved: string[] = [];
  const perName = new Map<string, { node: string; v: ExtendedResourceView }[]>();
  for (const { node, extendedResources } of inputs) {
    if (!extendedResources) {
      notObserved.push(node);
      continue;
    }
    for (const v of Object.values(extendedResources))
      perName.set(v.name, [...(perName.get(v.name) ?? []), { node, v }]);
  }
  const resources = [...perName].map(([name, rows]): MigrationResource => {
    rows.sort((a, b) => byName(a.node, b.node));
    const servedBy: MigrationResource['servedBy'] = { 'device-plugin': [], dra: [], none: [] };
    for (const { node, v } of rows) servedBy[v.servedBy].push(node);
    const pods = rows.flatMap(({ node, v }) => v.pods.map((p) => ({ ...p, node })));
    const leftToMove = pods.filter((p) => p.via === 'device-plugin');
    return {
      name,
      implicit: name.startsWith(IMPLICIT_EXTENDED_RESOURCE_PREFIX),
      mapped: rows.some(({ v }) => v.servedBy === 'dra' || (v.deviceClasses?.length ?? 0) > 0),
      nodes: rows.map(({ node, v }) => ({
        node,
        servedBy: v.servedBy,
        nodeStatus: v.nodeStatus,
        deviceClasses: v.deviceClasses,
        deviceClass: v.deviceClass,
        drivers: v.drivers,
      })),
      servedBy,
      deviceClassesUnknown: rows.filter(({ v }) => v.deviceClasses === null).map(({ node }) => node),
      pods,
      leftToMove,
      leftToMovePods: uniqueSorted(leftToMove.map((p) => p.pod)),
      leftToMoveNodes: uniqueSorted(leftToMove.map((p) => p.node)),
      notHolding: pods.filter((p) => p.via === 'unknown'),
    };
  });
  resources.sort((a, b) => Number(a.implicit) - Number(b.implicit) || byName(a.name, b.name));
  return { resources, notObserved: notObserved.sort(byName) };
}
