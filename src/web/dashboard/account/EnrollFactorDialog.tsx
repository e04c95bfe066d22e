import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { Enrollment, Factor } from '../../api/types.ts';
import { Button } from '../../ui/actions/Button.tsx';
import { Dialog } from '../../ui/overlay/Dialog.tsx';
import { EnrollConfirm } from './EnrollConfirm.tsx';
import { EnrollStart } from './EnrollStart.tsx';

interface EnrollDialogProps {
  open: boolean;
  onClose(): void;
  onVerified(factor: Factor): void;
  /** An app left `Pending verification`: its setup starts again, with a new key. */
  pending?: Factor;
}

/** Name the app, scan or type the key, confirm with a code. */
export function EnrollDialog({ open, onClose, onVerified, pending }: EnrollDialogProps) {
  const queryClient = useQueryClient();
  const [enrollment, setEnrollment] = useState<Enrollment | null>(null);
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['mfa.factors'] });

  const close = () => {
    onClose();
    setEnrollment(null);
    void refresh();
  };

  return (
    <Dialog
      title={pending ? `Finish setting up ${pending.name}` : 'Add an authenticator app'}
      open={open}
      onClose={close}
      description={enrollment ? 'Until you confirm a code, the app is not used at sign-in.' : undefined}
    >
      {enrollment ? (
        <EnrollConfirm
          enrollment={enrollment}
          onVerified={(factor) => {
            close();
            onVerified(factor);
          }}
        />
      ) : (
        <EnrollStart
          pending={pending}
          onEnrolled={(started) => {
            setEnrollment(started);
            void refresh();
          }}
        />
      )}
    </Dialog>
  );
}

/** "Add an authenticator app": the button and its dialog. */
export function EnrollFactorDialog({ onVerified }: { onVerified(factor: Factor): void }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <Button variant="primary" onClick={() => setOpen(true)}>
        Add an authenticator app
      </Button>
      <EnrollDialog open={open} onClose={() => setOpen(false)} onVerified={onVerified} />
    </>
  );
}
