'use client';
// Route error boundary: says what failed instead of a blank page, and offers a retry.

export default function RouteError({
  error,
  reset,
}: {
  error: Error & { digest?: string };
  reset: () => void;
}) {
  return (
    <div className="notice bad" role="alert">
      <h1>This view failed to render</h1>
      <p>{error.message || 'An unexpected error occurred in the dashboard.'}</p>
      {error.digest && <p className="muted">Server error reference: {error.digest}</p>}
      <button type="button" onClick={reset}>
        Try again
      </button>
    </div>
  );
}
