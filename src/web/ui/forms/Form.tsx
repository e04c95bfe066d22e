import type { FormEvent, ReactNode } from 'react';
import { Button } from '../actions/Button.tsx';
import { ErrorAlert } from '../feedback/ErrorAlert.tsx';

interface FormProps {
  onSubmit(): void;
  submitLabel: string;
  busy: boolean;
  error: unknown;
  children: ReactNode;
  /** A second action beside the submit button (Cancel, Back). */
  secondary?: ReactNode;
  label?: string;
}

/** A form whose submit calls the API: the error above the button, the button busy while the call runs. */
export function Form({ onSubmit, submitLabel, busy, error, children, secondary, label }: FormProps) {
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!busy) onSubmit();
  };
  return (
    <form className="form" onSubmit={submit} aria-label={label}>
      {children}
      <ErrorAlert error={error} />
      <div className="form-actions">
        {secondary}
        <Button type="submit" variant="primary" busy={busy}>
          {submitLabel}
        </Button>
      </div>
    </form>
  );
}
