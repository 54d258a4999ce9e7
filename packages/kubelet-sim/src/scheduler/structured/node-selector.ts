// A v1.NodeSelector matched against one node: k8s.io/component-helpers/scheduling/corev1/nodeaffinity
// (NewNodeSelector + Match), as the allocator uses it for ResourceSlice and device node selection and
// the scheduler for an allocated claim's status.allocation.nodeSelector.
//
// Terms are ORed, requirements within a term ANDed; empty terms are skipped (so a selector with only
// empty terms matches nothing). matchFields supports `metadata.name` with In/NotIn and one value.

import type { NodeSelector, NodeSelectorRequirement } from '../types.js';

export interface NodeInfo {
  name: string;
  labels: Readonly<Record<string, string>>;
}

export class NodeSelectorError extends Error {
  override readonly name = 'NodeSelectorError';
}

function validateRequirement(req: NodeSelectorRequirement, path: string): void {
  const values = req.values ?? [];
  switch (req.operator) {
    case 'In':
    case 'NotIn':
      if (values.length === 0)
        throw new NodeSelectorError(
          `${path}.values: Required value: must be specified when \`operator\` is 'In' or 'NotIn'`,
        );
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (values.length > 0)
        throw new NodeSelectorError(
          `${path}.values: Forbidden: may not be specified when \`operator\` is 'Exists' or 'DoesNotExist'`,
        );
      break;
    case 'Gt':
    case 'Lt':
      if (values.length !== 1 || !/^[+-]?\d+$/.test(values[0] ?? ''))
        throw new NodeSelectorError(`${path}.values: Invalid value: must be specified single integer value`);
      break;
    default:
      throw new NodeSelectorError(`${path}.operator: Unsupported value: "${String(req.operator)}"`);
  }
}

function labelMatches(req: NodeSelectorRequirement, labels: Readonly<Record<string, string>>): boolean {
  const has = Object.hasOwn(labels, req.key);
  const value = labels[req.key];
  const values = req.values ?? [];
  switch (req.operator) {
    case 'In':
      return has && values.includes(value ?? '');
    case 'NotIn':
      return !has || !values.includes(value ?? '');
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'Gt':
    case 'Lt': {
      if (!has || !/^[+-]?\d+$/.test(value ?? '')) return false;
      const actual = BigInt(value ?? '0');
      const bound = BigInt(values[0] ?? '0');
      return req.operator === 'Gt' ? actual > bound : actual < bound;
    }
    default:
      return false;
  }
}

function fieldMatches(req: NodeSelectorRequirement, node: NodeInfo, path: string): boolean {
  if (req.key !== 'metadata.name')
    throw new NodeSelectorError(`${path}.key: Invalid value: "${req.key}": not a valid field selector key`);
  const values = req.values ?? [];
  if (values.length !== 1)
    throw new NodeSelectorError(`${path}.values: Invalid value: must have one element`);
  if (req.operator === 'In') return node.name === values[0];
  if (req.operator === 'NotIn') return node.name !== values[0];
  throw new NodeSelectorError(
    `${path}.operator: Invalid value: "${req.operator}": not a valid selector operator`,
  );
}

/** Whether `node` matches `selector`; throws a NodeSelectorError for a selector the parser refuses. */
export function nodeSelectorMatches(selector: NodeSelector, node: NodeInfo): boolean {
  let matched = false;
  selector.nodeSelectorTerms.forEach((term, i) => {
    const exprs = term.matchExpressions ?? [];
    const fields = term.matchFields ?? [];
    if (exprs.length === 0 && fields.length === 0) return;
    const base = `nodeSelectorTerms[${i}]`;
    exprs.forEach((req, j) => validateRequirement(req, `${base}.matchExpressions[${j}]`));
    const labelsOk = exprs.every((req) => labelMatches(req, node.labels));
    const fieldsOk = fields.every((req, j) => fieldMatches(req, node, `${base}.matchFields[${j}]`));
    if (labelsOk && fieldsOk) matched = true;
  });
  return matched;
}

/** NodeMatches (pools_stable.go): node name, all nodes, or a node selector. */
export function nodeMatches(
  node: NodeInfo,
  nodeNameToMatch: string | undefined,
  allNodesMatch: boolean | undefined,
  selector: NodeSelector | undefined,
): boolean {
  if (nodeNameToMatch) return node.name === nodeNameToMatch;
  if (allNodesMatch) return true;
  if (selector) {
    try {
      return nodeSelectorMatches(selector, node);
    } catch (err) {
      throw new NodeSelectorError(
        `failed to parse node selector ${JSON.stringify(selector)}: ${(err as Error).message}`,
        { cause: err },
      );
    }
  }
  return false;
}
