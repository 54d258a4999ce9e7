#!/usr/bin/env node
// Generates the values table of deploy/helm/plugboard/README.md from values.schema.json (types and
// descriptions) and values.yaml (defaults), between the `<!-- values:start -->` and
// `<!-- values:end -->` markers, so the documentation cannot drift from the chart.
//
//   node deploy/scripts/chart-readme.mjs           rewrite the table
//   node deploy/scripts/chart-readme.mjs --check   exit 1 (with a diff hint) when the table is stale
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const chartDir = resolve(fileURLToPath(import.meta.url), '../../helm/plugboard');
const START = '<!-- values:start -->';
const END = '<!-- values:end -->';

function resolveRef(schema, node) {
  if (!node?.$ref) return node ?? {};
  const name = node.$ref.replace('#/definitions/', '');
  const target = schema.definitions?.[name];
  if (!target) throw new Error(`values.schema.json: unknown $ref ${node.$ref}`);
  return { ...target, description: node.description ?? target.description };
}

function typeOf(node) {
  if (node.enum) return node.enum.map((v) => JSON.stringify(v)).join(' | ');
  if (node.oneOf) return node.oneOf.map((o) => o.type).join(' | ');
  if (node.type === 'array' && node.items?.type) return `${node.items.type}[]`;
  if (node.type === 'array') return 'object[]';
  return node.type ?? 'object';
}

function cell(text) {
  return String(text).replaceAll('|', '\\|').replaceAll('\n', ' ');
}

/**
 * One row per documented value. Descends into closed objects whose every property is described; children
 * of a shared definition ($ref) get the parent's description as context, since theirs is generic.
 */
export function valueRows(schema, values) {
  const rows = [];
  const walk = (node, value, path, fromRef, context) => {
    const props = node.properties ?? {};
    const keys = Object.keys(props);
    const isMap = value !== null && typeof value === 'object' && !Array.isArray(value);
    const closed = node.additionalProperties === false;
    const documentedChildren = keys.length > 0 && keys.every((k) => resolveRef(schema, props[k]).description);
    if (isMap && closed && (path.length === 0 || documentedChildren)) {
      for (const key of Object.keys(value)) {
        const child = props[key];
        if (!child)
          throw new Error(`values.yaml: ${[...path, key].join('.')} is not declared in values.schema.json`);
        walk(
          resolveRef(schema, child),
          value[key],
          [...path, key],
          Boolean(child.$ref),
          fromRef ? node.description : undefined,
        );
      }
      return;
    }
    if (!node.description) throw new Error(`values.schema.json: ${path.join('.')} has no description`);
    rows.push({
      path: path.join('.'),
      type: typeOf(node),
      default: JSON.stringify(value),
      description: context ? `${context} ${node.description}` : node.description,
    });
  };
  walk(schema, values, [], false, undefined);
  return rows;
}

export function valuesTable() {
  const schema = JSON.parse(readFileSync(join(chartDir, 'values.schema.json'), 'utf8'));
  const values = parse(readFileSync(join(chartDir, 'values.yaml'), 'utf8'));
  const rows = valueRows(schema, values);
  return [
    '| Value | Type | Default | Description |',
    '| --- | --- | --- | --- |',
    ...rows.map(
      (r) => `| \`${r.path}\` | ${cell(r.type)} | \`${cell(r.default)}\` | ${cell(r.description)} |`,
    ),
  ].join('\n');
}

function withTable(readme, table) {
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  if (start < 0 || end < start) throw new Error(`README.md needs the markers ${START} and ${END}`);
  return `${readme.slice(0, start + START.length)}\n${table}\n${readme.slice(end)}`;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const readmePath = join(chartDir, 'README.md');
  const readme = readFileSync(readmePath, 'utf8');
  const updated = withTable(readme, valuesTable());
  if (process.argv.includes('--check')) {
    if (updated !== readme) {
      console.error(
        'deploy/helm/plugboard/README.md: the values table is stale; run node deploy/scripts/chart-readme.mjs',
      );
      process.exit(1);
    }
  } else {
    writeFileSync(readmePath, updated);
  }
}
