'use client';
// The side drawer a device opens in: a modal <dialog> (focus kept inside by the browser, Escape
// closes), its title as the accessible name, Close focused first. Shared by the device-plugin and
// DRA device drawers.
import { useEffect, useRef, type ReactNode } from 'react';

export function Drawer({
  title,
  onClose,
  children,
}: {
  title: ReactNode;
  onClose: () => void;
  children: ReactNode;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) {
      if (typeof d.showModal === 'function') d.showModal();
      else d.setAttribute('open', '');
    }
  }, []);
  return (
    <dialog
      ref={ref}
      className="drawer"
      aria-labelledby="drawer-title"
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
    >
      <div className="row">
        <h2 id="drawer-title" style={{ margin: 0 }}>
          {title}
        </h2>
        <span className="spacer" />
        <button type="button" onClick={onClose} autoFocus>
          Close
        </button>
      </div>
      {children}
    </dialog>
  );
}
