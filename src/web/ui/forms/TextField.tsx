import { useId, type InputHTMLAttributes } from 'react';
import { describedBy, FieldError, useFieldProblem } from './field-problems.tsx';

interface TextFieldProps extends Omit<InputHTMLAttributes<HTMLInputElement>, 'onChange' | 'value'> {
  label: string;
  value: string;
  onChange(value: string): void;
  /** Shown under the input and read with it. */
  hint?: string;
  /** The API's name of the field (`email`, `sso.default_role`): what the API says about it is shown under the input. */
  name?: string;
}

/** A labelled input; its hint, and the API's problem with it, are announced with it. */
export function TextField({ label, value, onChange, hint, id, className, name, ...rest }: TextFieldProps) {
  const generated = useId();
  const inputId = id ?? generated;
  const hintId = `${inputId}-hint`;
  const errorId = `${inputId}-error`;
  const problem = useFieldProblem(name);
  return (
    <div className={['field', className].filter(Boolean).join(' ')}>
      <label htmlFor={inputId}>{label}</label>
      <input
        {...rest}
        id={inputId}
        name={name}
        value={value}
        onChange={(event) => onChange(event.target.value)}
        aria-invalid={problem ? true : undefined}
        aria-describedby={describedBy(hint && hintId, problem && errorId)}
      />
      {hint ? (
        <p className="hint" id={hintId}>
          {hint}
        </p>
      ) : null}
      <FieldError id={errorId} problem={problem} />
    </div>
  );
}
