import { useEffect, useId, useRef, type ReactNode } from 'react';

interface DialogProps {
  title: string;
  open: boolean;
  onClose(): void;
  children: ReactNode;
  /** Extra line under the title. */
  description?: ReactNode;
}

/**
 * A modal on the native <dialog>: the browser traps focus inside, Escape closes it, and focus returns
 * to whatever opened it. A dialog may open another (a confirmation inside "Roles & groups"): React passes
 * the inner one's `close` and `cancel` events up to the outer one's handlers, so each answers only its own.
 */
export function Dialog({ title, open, onClose, children, description }: DialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const descriptionId = useId();

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);

  return (
    <dialog
      ref={ref}
      className="dialog"
      aria-labelledby={titleId}
      aria-describedby={description ? descriptionId : undefined}
      onClose={(event) => {
        if (event.target === event.currentTarget) onClose();
      }}
      onCancel={(event) => {
        if (event.target === event.currentTarget) onClose();
      }}
    >
      {open ? (
        <>
          <header className="dialog-header">
            <h2 id={titleId}>{title}</h2>
            <button type="button" className="dialog-close" aria-label="Close" onClick={onClose}>
              ×
            </button>
          </header>
          {description ? (
            <p id={descriptionId} className="dialog-description">
              {description}
            </p>
          ) : null}
          <div className="dialog-body">{children}</div>
        </>
      ) : null}
    </dialog>
  );
}
