// Output formats: kubectl-style tables (upper-case headers, columns padded, three spaces apart) for
// people, `-o json` / `-o yaml` for scripts (the gateway's own documents, wrapped in `{ items }`).
import { stringify } from 'yaml';

export type OutputFormat = 'table' | 'json' | 'yaml';
export const OUTPUT_FORMATS: readonly OutputFormat[] = ['table', 'json', 'yaml'];

export interface Column<T> {
  header: string;
  value: (row: T) => string | number | boolean | null;
}

export function renderTable<T>(rows: readonly T[], columns: readonly Column<T>[]): string {
  const cells = rows.map((r) => columns.map((c) => cellText(c.value(r))));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((row) => row[i]!.length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i]!)))
      .join('   ')
      .trimEnd();
  return [line(columns.map((c) => c.header.toUpperCase())), ...cells.map(line)].join('\n') + '\n';
}

function cellText(value: string | number | boolean | null): string {
  if (value === null || value === '') return '<none>';
  return String(value).replace(/\s+/g, ' ');
}

export function renderDocument(value: unknown, format: 'json' | 'yaml'): string {
  return format === 'json' ? `${JSON.stringify(value, null, 2)}\n` : stringify(value);
}

/** Age of a timestamp as kubectl prints it: 45s, 12m, 3h, 2d. */
/**
 * The REGISTERED column: `yes`, else the phase that says why not (e.g. `waiting-for-kubelet` while
 * the kubelet is away) as one word, so the columns stay splittable. A gateway older than the
 * `registration` field gives `no`.
 */
export function registeredText(r: { registered: boolean; registration?: string }): string {
  if (r.registered) return 'yes';
  return r.registration ?? 'no';
}

export function age(from: string | null, now: number): string {
  if (!from) return '';
  const s = Math.max(0, Math.floor((now - Date.parse(from)) / 1000));
  if (Number.isNaN(s)) return '';
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172_800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}

/** Time left until a timestamp, in the same units as age(). */
export function until(to: string, now: number): string {
  return age(new Date(now).toISOString(), Date.parse(to));
}

/** "60s", "5m", "1h30m", "500ms" or a number of seconds → whole seconds (at least 1). */
export function parseDurationSeconds(text: string): number | null {
  if (/^\d+$/.test(text)) return Number(text);
  const re = /(\d+)(ms|s|m|h|d)/gy;
  let total = 0;
  let matched = 0;
  for (const m of text.matchAll(re)) {
    const n = Number(m[1]);
    total += { ms: n / 1000, s: n, m: n * 60, h: n * 3600, d: n * 86_400 }[
      m[2] as 'ms' | 's' | 'm' | 'h' | 'd'
    ];
    matched += m[0].length;
  }
  if (matched === 0 || matched !== text.length) return null;
  return Math.max(1, Math.ceil(total));
}
