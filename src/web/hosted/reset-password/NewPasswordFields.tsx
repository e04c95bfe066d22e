import { TextField } from '../../ui/forms/TextField.tsx';

interface NewPasswordFieldsProps {
  password: string;
  confirmation: string;
  onPassword(value: string): void;
  onConfirmation(value: string): void;
  label?: string;
}

/** A new password typed twice, with the service's rules as the hint. */
export function NewPasswordFields({ password, confirmation, onPassword, onConfirmation, label = 'New password' }: NewPasswordFieldsProps) {
  return (
    <>
      <TextField
        label={label}
        type="password"
        value={password}
        onChange={onPassword}
        required
        minLength={8}
        maxLength={128}
        autoComplete="new-password"
        hint="8 to 128 characters."
      />
      <TextField
        label="Repeat the password"
        type="password"
        value={confirmation}
        onChange={onConfirmation}
        required
        minLength={8}
        maxLength={128}
        autoComplete="new-password"
      />
    </>
  );
}
