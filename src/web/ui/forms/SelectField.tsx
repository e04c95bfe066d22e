import { useId } from 'react';
import { describedBy, FieldError, useFieldProblem } from './field-problems.tsx';

export interface Option<T extends string> {
  value: T;
  label: string;
}

interface SelectFieldProps<T extends string> {
  label: string;
  value: T;
  options: readonly Option<T>[];
  onChange(value: T): void;
  hint?: string;
  required?: boolean;
  /** The API's name of the field: what the API says about it is shown under it. */
  name?: string;
}

export function SelectField<T extends string>({ label, value, options, onChange, hint, required, name }: SelectFieldProps<T>) {
  const id = useId();
  const problem = useFieldProblem(name);
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select
        id={id}
        name={name}
        value={value}
        required={required}
        aria-invalid={problem ? true : undefined}
        aria-describedby={describedBy(hint && `${id}-hint`, problem && `${id}-error`)}
        onChange={(event) => {
          const chosen = options.find((o) => o.value === event.target.value);
          if (chosen) onChange(chosen.value);
        }}
      >
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
      {hint ? (
        <p className="hint" id={`${id}-hint`}>
          {hint}
        </p>
      ) : null}
      <FieldError id={`${id}-error`} problem={problem} />
    </div>
  );
}
