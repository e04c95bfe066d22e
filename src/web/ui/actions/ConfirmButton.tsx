import { useState, type ReactNode } from 'react';
import { ErrorAlert } from '../feedback/ErrorAlert.tsx';
import { Dialog } from '../overlay/Dialog.tsx';
import { Button } from './Button.tsx';

interface ConfirmButtonProps {
  /** The button's label, and the confirming button's unless `confirmLabel` says otherwise. */
  label: string;
  /** Accessible name when the label alone is ambiguous in a list ("Delete ada@example.com"). */
  ariaLabel?: string;
  title: string;
  /** What will happen, in words. */
  children: ReactNode;
  confirmLabel?: string;
  variant?: 'danger' | 'secondary';
  onConfirm(): Promise<unknown>;
}

/** A destructive action asks first, in a dialog that says what will happen; its failure is shown there. */
export function ConfirmButton({ label, ariaLabel, title, children, confirmLabel, variant = 'danger', onConfirm }: ConfirmButtonProps) {
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const close = () => {
    setOpen(false);
    setError(null);
  };

  const confirm = async () => {
    setBusy(true);
    setError(null);
    try {
      await onConfirm();
      setOpen(false);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <Button
        variant={variant === 'danger' ? 'secondary' : variant}
        className="button-small"
        aria-label={ariaLabel}
        onClick={() => setOpen(true)}
      >
        {label}
      </Button>
      <Dialog title={title} open={open} onClose={close}>
        <div className="confirm-text">{children}</div>
        <ErrorAlert error={error} />
        <div className="form-actions">
          <Button onClick={close}>Cancel</Button>
          <Button variant={variant === 'danger' ? 'danger' : 'primary'} busy={busy} onClick={() => void confirm()}>
            {confirmLabel ?? label}
          </Button>
        </div>
      </Dialog>
    </>
  );
}
