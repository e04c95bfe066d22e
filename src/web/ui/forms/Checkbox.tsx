import { useId } from 'react';
import { describedBy, FieldError, useFieldProblem } from './field-problems.tsx';

export function Checkbox({
  label,
  checked,
  onChange,
  hint,
  name,
}: {
  label: string;
  checked: boolean;
  onChange(checked: boolean): void;
  hint?: string;
  /** The API's name of the field: what the API says about it is shown under it. */
  name?: string;
}) {
  const id = useId();
  const problem = useFieldProblem(name);
  return (
    <div className="checkbox">
      <input
        id={id}
        type="checkbox"
        name={name}
        checked={checked}
        onChange={(event) => onChange(event.target.checked)}
        aria-invalid={problem ? true : undefined}
        aria-describedby={describedBy(hint && `${id}-hint`, problem && `${id}-error`)}
      />
      <label htmlFor={id}>{label}</label>
      {hint ? (
        <p className="hint" id={`${id}-hint`}>
          {hint}
        </p>
      ) : null}
      <FieldError id={`${id}-error`} problem={problem} />
    </div>
  );
}
