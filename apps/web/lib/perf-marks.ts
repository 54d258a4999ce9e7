// User Timing marks for the benchmark (data arrived, first full render). One mark per name per
// page load; they cost nothing when nobody reads them.
const marked = new Set<string>();

export function markOnce(name: string): void {
  if (marked.has(name) || typeof performance === 'undefined' || typeof performance.mark !== 'function')
    return;
  marked.add(name);
  performance.mark(name);
}

/** Marks `name` after the browser has had the chance to paint the current commit. */
export function markAfterPaint(name: string): void {
  if (marked.has(name) || typeof requestAnimationFrame !== 'function') return;
  requestAnimationFrame(() => setTimeout(() => markOnce(name), 0));
}
