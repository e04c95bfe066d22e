import { NewPasswordField } from '../../ui/forms/NewPasswordField.tsx';

interface NewPasswordFieldsProps {
  password: string;
  confirmation: string;
  onPassword(value: string): void;
  onConfirmation(value: string): void;
  label?: string;
  /** The API's name of the new password (`password`, `new_password`): its problems show under the first field. */
  name?: string;
}

/** A new password typed twice, with the service's rules as the hint. */
export function NewPasswordFields({
  password,
  confirmation,
  onPassword,
  onConfirmation,
  label = 'New password',
  name,
}: NewPasswordFieldsProps) {
  return (
    <>
      <NewPasswordField label={label} name={name} value={password} onChange={onPassword} />
      <NewPasswordField label="Repeat the password" value={confirmation} onChange={onConfirmation} withRule={false} />
    </>
  );
}
