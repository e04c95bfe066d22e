import { useState, type ReactNode } from 'react';
import { Button } from '../actions/Button.tsx';
import { Form } from '../forms/Form.tsx';
import { Dialog } from './Dialog.tsx';
import { DoneButton } from './DoneButton.tsx';

/** What the dialog needs of a react-query mutation that takes no variables. */
interface DialogMutation<T> {
  mutate(variables: undefined, options?: { onSuccess?: (result: T) => void }): void;
  reset(): void;
  isPending: boolean;
  error: unknown;
  data: T | undefined;
}

interface FormDialogProps<T> {
  /** The label of the button that opens it. */
  opener: string;
  openerVariant?: 'primary' | 'secondary';
  /** The dialog's title, which also names its form. */
  title: string;
  description?: ReactNode;
  submitLabel: string;
  mutation: DialogMutation<T>;
  /** Puts the fields back as they were; runs whenever the dialog closes. */
  onReset(): void;
  /**
   * Shown once the call succeeded, above a Done button (a secret shown this once, where an invitation
   * went). Without it the dialog closes as soon as the call succeeds.
   */
  done?: (result: T) => ReactNode;
  /** Told when the dialog opens and closes: what the fields offer may be fetched only while it is open. */
  onOpenChange?(open: boolean): void;
  children: ReactNode;
}

/** A button that opens a dialog with one form calling the API: the frame of every "create" in the dashboard. */
export function FormDialog<T>({
  opener,
  openerVariant = 'primary',
  title,
  description,
  submitLabel,
  mutation,
  onReset,
  done,
  onOpenChange,
  children,
}: FormDialogProps<T>) {
  const [open, setOpen] = useState(false);
  const show = (next: boolean) => {
    setOpen(next);
    onOpenChange?.(next);
  };
  const close = () => {
    show(false);
    onReset();
    mutation.reset();
  };
  const submit = () => mutation.mutate(undefined, { onSuccess: () => (done ? undefined : close()) });
  return (
    <>
      <Button variant={openerVariant} onClick={() => show(true)}>
        {opener}
      </Button>
      <Dialog title={title} open={open} onClose={close} description={description}>
        {done && mutation.data !== undefined ? (
          <>
            {done(mutation.data)}
            <DoneButton onDone={close} />
          </>
        ) : (
          <Form label={title} onSubmit={submit} submitLabel={submitLabel} busy={mutation.isPending} error={mutation.error}>
            {children}
          </Form>
        )}
      </Dialog>
    </>
  );
}
