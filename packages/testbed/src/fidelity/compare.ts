// Field-by-field comparison of one scenario's normalised outcomes on kubelet-sim and on the real
// kubelet. Every field in either outcome is counted; a field that differs (or is on one side only)
// is a difference, explained when an entry of the explained-differences file
// (packages/testbed/fidelity/explained.yaml) matches its path and scenario, else unexplained.
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { flatten, type Leaf } from './normalise.js';

const explanationSchema = z.strictObject({
  /** A field path; `*` stands for any run of characters (dots included). */
  path: z.string().min(1),
  /** Scenario names (globs) the entry is for; every scenario when absent. */
  scenarios: z.array(z.string().min(1)).min(1).optional(),
  /** Why the difference stays: what each kind does and why kubelet-sim does not do the other. */
  reason: z.string().min(20, 'say why, in a sentence'),
});
export type Explanation = z.infer<typeof explanationSchema>;

/** Parses the explained-differences file; errors name the file and the entry. */
export function parseExplanations(text: string, file: string): Explanation[] {
  const result = z.array(explanationSchema).safeParse(parseYaml(text) ?? []);
  if (!result.success)
    throw new Error(
      `${file}: ${result.error.issues.map((i) => `[${i.path.join('].')}: ${i.message}`).join('; ')}`,
    );
  return result.data;
}

export function loadExplanations(file: string): Explanation[] {
  return parseExplanations(readFileSync(file, 'utf8'), file);
}

function globRegExp(glob: string): RegExp {
  return new RegExp(
    `^${glob
      .split('*')
      .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );
}

/** The first explanation whose path (and scenarios, when given) match. */
export function explain(
  explanations: readonly Explanation[],
  scenario: string,
  path: string,
): Explanation | undefined {
  return explanations.find(
    (e) =>
      globRegExp(e.path).test(path) &&
      (e.scenarios === undefined || e.scenarios.some((s) => globRegExp(s).test(scenario))),
  );
}

export interface Difference {
  path: string;
  /** undefined: the field is not in that kind's outcome. */
  sim: Leaf | undefined;
  real: Leaf | undefined;
  /** The explanation's reason, when one matched. */
  reason?: string;
}

export interface Comparison {
  scenario: string;
  /** Fields in either outcome. */
  fields: number;
  explained: Difference[];
  unexplained: Difference[];
  /** The explanations that matched a difference here. */
  used: Explanation[];
}

export function compare(
  scenario: string,
  sim: unknown,
  real: unknown,
  explanations: readonly Explanation[],
): Comparison {
  const a = flatten(sim);
  const b = flatten(real);
  const paths = [...new Set([...a.keys(), ...b.keys()])].sort();
  const explained: Difference[] = [];
  const unexplained: Difference[] = [];
  const used = new Set<Explanation>();
  for (const path of paths) {
    const s = a.get(path);
    const r = b.get(path);
    if (a.has(path) && b.has(path) && s === r) continue;
    const e = explain(explanations, scenario, path);
    const d: Difference = { path, sim: s, real: r };
    if (e) {
      used.add(e);
      explained.push({ ...d, reason: e.reason });
    } else unexplained.push(d);
  }
  return { scenario, fields: paths.length, explained, unexplained, used: [...used] };
}

/** One line per difference: `path: sim=… real=…`. */
export function describeDifference(d: Difference): string {
  const show = (v: Leaf | undefined) => (v === undefined ? '(absent)' : JSON.stringify(v));
  return `${d.path}: sim=${show(d.sim)} real=${show(d.real)}`;
}
