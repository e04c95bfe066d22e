import { useCallback, useEffect, useMemo, useRef, useState, type FormEvent, type ReactNode } from 'react';
import { problemOf } from '../../api/errors.ts';
import { Button } from '../actions/Button.tsx';
import { ErrorAlert } from '../feedback/ErrorAlert.tsx';
import { FieldProblemsContext } from './field-problems.tsx';
import { isAbout } from './field-path.ts';

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

/**
 * A form whose submit calls the API, the button busy while the call runs. A refusal's field problems
 * (`details`) are shown by the fields they name, and the first such field takes the focus; the banner
 * above the button keeps what no field of the form shows.
 */
export function Form({ onSubmit, submitLabel, busy, error, children, secondary, label }: FormProps) {
  const form = useRef<HTMLFormElement>(null);
  const [claimed, setClaimed] = useState<readonly string[]>([]);
  const claim = useCallback((name: string) => {
    setClaimed((names) => [...names, name]);
    return () =>
      setClaimed((names) => {
        const at = names.indexOf(name);
        return at < 0 ? names : [...names.slice(0, at), ...names.slice(at + 1)];
      });
  }, []);
  const details = useMemo(() => (error ? problemOf(error).details : []), [error]);
  const fieldProblems = useMemo(() => ({ details, claim }), [details, claim]);
  const shownByField = useCallback((path: string) => claimed.some((name) => isAbout(name, path)), [claimed]);

  useEffect(() => {
    if (details.length > 0) form.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
  }, [details]);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!busy) onSubmit();
  };
  return (
    <form className="form" onSubmit={submit} aria-label={label} ref={form}>
      <FieldProblemsContext value={fieldProblems}>{children}</FieldProblemsContext>
      <ErrorAlert error={error} shownByField={shownByField} />
      <div className="form-actions">
        {secondary}
        <Button type="submit" variant="primary" busy={busy}>
          {submitLabel}
        </Button>
      </div>
    </form>
  );
}
