// An error state that says why (never a blank page or a silent 0).
import type { ReactNode } from 'react';
import { ApiError } from '../lib/api';

export function ProblemNotice({
  title,
  error,
  children,
}: {
  title: string;
  error?: unknown;
  children?: ReactNode;
}) {
  const detail =
    error instanceof ApiError
      ? `${error.title}: ${error.detail}`
      : error instanceof Error
        ? error.message
        : typeof error === 'string'
          ? error
          : null;
  return (
    <div className="notice bad" role="alert">
      <p>
        <strong>{title}</strong>
      </p>
      {detail && <p>{detail}</p>}
      {children}
    </div>
  );
}
