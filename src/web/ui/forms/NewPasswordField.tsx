import { TextField } from './TextField.tsx';

interface NewPasswordFieldProps {
  label: string;
  value: string;
  onChange(value: string): void;
  /** Say the service's rule under the field (the first of two fields; not the repeat). */
  withRule?: boolean;
  /** The API's name of the field (`password`, `new_password`): its problems are shown under it. */
  name?: string;
}

/** A password being chosen, held to the service's rule (8 to 128 characters) before it is sent. */
export function NewPasswordField({ label, value, onChange, withRule = true, name }: NewPasswordFieldProps) {
  return (
    <TextField
      label={label}
      name={name}
      type="password"
      value={value}
      onChange={onChange}
      required
      minLength={8}
      maxLength={128}
      autoComplete="new-password"
      hint={withRule ? '8 to 128 characters.' : undefined}
    />
  );
}
