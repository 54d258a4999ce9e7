// GetPreferredAllocation policy (pure): honour must-include, return exactly `size` IDs from the
// available ones, prefer one NUMA node, then the fewest nodes, then the nodes with the most free
// devices. Within a node, replicas of different physical devices come before a second replica of
// the same one (spreads shared load). Deterministic for equal input.
import { PluginError } from '../errors.js';
import { naturalCompare } from '../sources/listeners.js';
import { REPLICA_SEPARATOR } from '../device-state.js';

export interface PreferredAllocationInput {
  available: readonly string[];
  mustInclude: readonly string[];
  size: number;
  /** NUMA nodes of an advertised device ID; empty = no NUMA information. */
  numaNodesOf: (id: string) => readonly number[];
}

export interface PreferredAllocationResult {
  chosen: string[];
  reason: string;
}

const NO_NUMA = -1;

function replicaIndex(id: string): number {
  const at = id.lastIndexOf(REPLICA_SEPARATOR);
  return at < 0 ? 0 : Number.parseInt(id.slice(at + REPLICA_SEPARATOR.length), 10) || 0;
}

function byReplicaThenId(a: string, b: string): number {
  return replicaIndex(a) - replicaIndex(b) || naturalCompare(a, b);
}

function nodeOf(id: string, numaNodesOf: PreferredAllocationInput['numaNodesOf']): number {
  const nodes = numaNodesOf(id);
  return nodes.length === 0 ? NO_NUMA : Math.min(...nodes);
}

export function preferredAllocation(input: PreferredAllocationInput): PreferredAllocationResult {
  const { size, numaNodesOf } = input;
  const mustInclude = [...new Set(input.mustInclude)];
  if (!Number.isInteger(size) || size < 1) {
    throw new PluginError('invalid-argument', `allocation size must be a positive integer, got ${size}`);
  }
  if (mustInclude.length > size) {
    throw new PluginError(
      'invalid-argument',
      `must-include has ${mustInclude.length} devices (${mustInclude.join(', ')}) but the allocation size is ${size}`,
    );
  }
  const mustSet = new Set(mustInclude);
  const pool = [...new Set(input.available)].filter((id) => !mustSet.has(id));
  const needed = size - mustInclude.length;
  if (pool.length < needed) {
    throw new PluginError(
      'invalid-argument',
      `cannot choose ${size} devices: ${pool.length + mustInclude.length} available (including must-include)`,
    );
  }
  if (needed === 0) return { chosen: mustInclude, reason: 'must-include devices fill the request' };

  const groups = new Map<number, string[]>();
  for (const id of pool) {
    const node = nodeOf(id, numaNodesOf);
    const group = groups.get(node);
    if (group) group.push(id);
    else groups.set(node, [id]);
  }
  for (const group of groups.values()) group.sort(byReplicaThenId);
  const mustNodes = new Set(mustInclude.map((id) => nodeOf(id, numaNodesOf)).filter((n) => n !== NO_NUMA));
  const free = (node: number): number => groups.get(node)?.length ?? 0;
  // Most free first, then the lower node ID: deterministic.
  const byFree = (a: number, b: number): number => free(b) - free(a) || a - b;
  const numaNodes = [...groups.keys()].filter((n) => n !== NO_NUMA);

  // 1. One NUMA node holds everything (must-include devices included).
  if (mustNodes.size <= 1) {
    const fits = numaNodes
      .filter((n) => free(n) >= needed && (mustNodes.size === 0 || mustNodes.has(n)))
      .sort(byFree);
    const node = fits[0];
    if (node !== undefined) {
      return {
        chosen: [...mustInclude, ...groups.get(node)!.slice(0, needed)],
        reason: `single NUMA node ${node} (${free(node)} free)${mustInclude.length ? ', with must-include devices' : ''}`,
      };
    }
  }

  // 2. The fewest nodes: nodes already used by must-include first, then by free devices; devices
  //    without NUMA information last.
  const order = [
    ...numaNodes.filter((n) => mustNodes.has(n)).sort(byFree),
    ...numaNodes.filter((n) => !mustNodes.has(n)).sort(byFree),
    ...(groups.has(NO_NUMA) ? [NO_NUMA] : []),
  ];
  const chosen = [...mustInclude];
  const used: number[] = [];
  for (const node of order) {
    if (chosen.length === size) break;
    const take = groups.get(node)!.slice(0, size - chosen.length);
    chosen.push(...take);
    used.push(node);
  }
  const numaUsed = [...new Set([...mustNodes, ...used.filter((n) => n !== NO_NUMA)])].sort((a, b) => a - b);
  if (numaUsed.length === 0) return { chosen, reason: 'no NUMA information; lowest IDs first' };
  const noNuma = used.includes(NO_NUMA) ? ' plus devices without NUMA information' : '';
  return {
    chosen,
    reason:
      numaUsed.length === 1
        ? `single NUMA node ${numaUsed[0]}${noNuma}`
        : `${numaUsed.length} NUMA nodes [${numaUsed.join(', ')}]${noNuma}: no single node has ${size} free`,
  };
}
