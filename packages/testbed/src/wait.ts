// Waiting on a condition with a deadline: re-checked until it holds; the deadline only bounds how
// long it may take on a busy machine, it is not a pause. The one waitFor of Plugboard's tests,
// benches and fixtures (also exported alone as `@plugboard/testbed/wait`, which loads nothing else).

/** What counts as "not yet". */
export type Falsy = undefined | null | false | 0 | '';

/**
 * Re-checks `fn` every `intervalMs` until it returns a truthy value (a throw counts as not yet),
 * at most `timeoutMs`; the error names what was awaited and the last error or value seen, so a
 * failure says what the state was.
 */
export async function waitFor<T>(
  what: string,
  fn: () => T | Falsy | Promise<T | Falsy>,
  timeoutMs = 60_000,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
      last = v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      const seen = last instanceof Error ? `: ${last.message}` : ` (last seen: ${String(last)})`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${seen}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
