// What every command gets: the gateways to talk to, the output format and the process's streams,
// plus the fan-out helper that asks several gateways at once and keeps going when one fails.
import { CliError } from './errors.js';
import { renderDocument, renderTable, type Column, type OutputFormat } from './output.js';
import type { GatewayConnection } from './transport.js';

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Whether stdout is a terminal (watch redraws in place only then). */
  isTTY: boolean;
  /** Aborts long-running commands (watch); SIGINT in the real CLI. */
  signal?: AbortSignal;
  now: () => number;
}

export interface CommandContext {
  io: CliIo;
  output: OutputFormat;
  /** Connects lazily: `--help` and usage errors never touch the network. */
  gateways(): Promise<GatewayConnection[]>;
  /** Errors of gateways that failed while others answered; decide the exit code at the end. */
  partialErrors: CliError[];
}

/** The gateways serving `node` (all of them when node is null); not-found when none does. */
export async function selectGateways(ctx: CommandContext, node: string | null): Promise<GatewayConnection[]> {
  const all = await ctx.gateways();
  if (node === null) return all;
  const names = await Promise.all(all.map((g) => g.nodeName().catch(() => null)));
  const matching = all.filter((_, i) => names[i] === node);
  if (matching.length === 0) {
    const known = names.filter((n): n is string => n !== null).sort();
    throw new CliError('not-found', `no gateway serves node "${node}"; nodes: ${known.join(', ') || 'none'}`);
  }
  return matching;
}

/**
 * Runs `fn` against every gateway concurrently. Answers come back in gateway order; a gateway that
 * fails is reported on stderr and remembered, unless every gateway failed, which throws the first error.
 */
export async function fanOut<T>(
  ctx: CommandContext,
  gateways: GatewayConnection[],
  fn: (g: GatewayConnection) => Promise<T>,
): Promise<{ gateway: GatewayConnection; value: T }[]> {
  const settled = await Promise.allSettled(gateways.map(fn));
  const ok: { gateway: GatewayConnection; value: T }[] = [];
  const errors: CliError[] = [];
  settled.forEach((r, i) => {
    if (r.status === 'fulfilled') ok.push({ gateway: gateways[i]!, value: r.value });
    else errors.push(CliError.from(r.reason));
  });
  if (ok.length === 0 && errors.length > 0) throw errors[0]!;
  for (const e of errors) ctx.io.stderr(`error: ${e.message}\n`);
  ctx.partialErrors.push(...errors);
  return ok;
}

/** Prints rows as a table, or the documents as `{ items }` in JSON/YAML. */
export function printList<R>(
  ctx: CommandContext,
  rows: readonly R[],
  columns: readonly Column<R>[],
  items: unknown[],
  empty: string,
): void {
  if (ctx.output !== 'table') {
    ctx.io.stdout(renderDocument({ items }, ctx.output));
    return;
  }
  if (rows.length === 0) ctx.io.stderr(`${empty}\n`);
  else ctx.io.stdout(renderTable(rows, columns));
}

/** Prints one document (JSON/YAML) or a line of text (table output). */
export function printResult(ctx: CommandContext, document: unknown, text: string): void {
  if (ctx.output === 'table') ctx.io.stdout(`${text}\n`);
  else ctx.io.stdout(renderDocument(document, ctx.output));
}
