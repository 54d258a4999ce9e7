// Reliability figures: every reliability test states its size (short form in `npm test`, full form
// with PLUGBOARD_RELIABILITY=full) and reports the numbers it measured. They go to the test output
// (node:test diagnostics) and, when PLUGBOARD_RELIABILITY_FIGURES names a file, to that file as JSON
// lines, from which scripts/reliability.mjs writes docs/RELIABILITY.md.
import { appendFileSync } from 'node:fs';

export type ReliabilityForm = 'short' | 'full';

export const FORM: ReliabilityForm = process.env.PLUGBOARD_RELIABILITY === 'full' ? 'full' : 'short';

/** The size of a scenario in the current form. */
export const sized = <T>(short: T, full: T): T => (FORM === 'full' ? full : short);

export interface Figure {
  /** Scenario id, shared by every figure of one scenario (e.g. "kubelet-restarts"). */
  scenario: string;
  /** What was measured, e.g. "restarts survived". */
  figure: string;
  value: number | string;
  unit?: string;
  /** Bound or expectation the value is held against, for the report. */
  bound?: string;
}

export function report(t: { diagnostic(message: string): void }, figure: Figure): void {
  const line = { form: FORM, ...figure };
  t.diagnostic(
    `${figure.scenario}: ${figure.figure} = ${figure.value}${figure.unit ? ` ${figure.unit}` : ''}${figure.bound ? ` (bound: ${figure.bound})` : ''}`,
  );
  const file = process.env.PLUGBOARD_RELIABILITY_FIGURES;
  if (file) appendFileSync(file, `${JSON.stringify(line)}\n`);
}
