'use client';
// A modal confirmation built on <dialog>: focus is trapped by the browser, Escape cancels, and
// Cancel has the initial focus so a stray Enter never injects a fault.
import { useEffect, useRef, type ReactNode } from 'react';

export interface ConfirmDialogProps {
  title: string;
  confirmLabel: string;
  pending: boolean;
  danger?: boolean;
  error?: string | null;
  onConfirm: () => void;
  onCancel: () => void;
  children: ReactNode;
}

export function ConfirmDialog({
  title,
  confirmLabel,
  pending,
  danger,
  error,
  onConfirm,
  onCancel,
  children,
}: ConfirmDialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const cancelRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) {
      if (typeof d.showModal === 'function') d.showModal();
      else d.setAttribute('open', '');
    }
    cancelRef.current?.focus();
  }, []);
  return (
    <dialog
      ref={ref}
      aria-labelledby="confirm-title"
      onCancel={(e) => {
        e.preventDefault();
        if (!pending) onCancel();
      }}
    >
      <form
        method="dialog"
        onSubmit={(e) => {
          e.preventDefault();
          if (!pending) onConfirm();
        }}
      >
        <h2 id="confirm-title" style={{ marginTop: 0 }}>
          {title}
        </h2>
        {children}
        {error && (
          <p className="notice bad" role="alert">
            {error}
          </p>
        )}
        <div className="dialog-actions">
          <button type="button" ref={cancelRef} onClick={onCancel} disabled={pending} autoFocus>
            Cancel
          </button>
          <button
            type="submit"
            className={danger ? 'danger' : 'primary'}
            disabled={pending}
            aria-busy={pending}
          >
            {pending ? 'Sending…' : confirmLabel}
          </button>
        </div>
      </form>
    </dialog>
  );
}
