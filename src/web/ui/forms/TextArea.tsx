import { useId, type TextareaHTMLAttributes } from 'react';
import { describedBy, FieldError, useFieldProblem } from './field-problems.tsx';

interface TextAreaProps extends Omit<TextareaHTMLAttributes<HTMLTextAreaElement>, 'onChange' | 'value'> {
  label: string;
  value: string;
  onChange(value: string): void;
  hint?: string;
  /** The API's name of the field: what the API says about it (or an item of it) is shown under it. */
  name?: string;
}

export function TextArea({ label, value, onChange, hint, name, ...rest }: TextAreaProps) {
  const id = useId();
  const problem = useFieldProblem(name);
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <textarea
        {...rest}
        id={id}
        name={name}
        value={value}
        onChange={(event) => onChange(event.target.value)}
        aria-invalid={problem ? true : undefined}
        aria-describedby={describedBy(hint && `${id}-hint`, problem && `${id}-error`)}
      />
      {hint ? (
        <p className="hint" id={`${id}-hint`}>
          {hint}
        </p>
      ) : null}
      <FieldError id={`${id}-error`} problem={problem} />
    </div>
  );
}
