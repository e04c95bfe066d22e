import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { Enrollment, Factor } from '../../api/types.ts';
import { Button } from '../../ui/actions/Button.tsx';
import { Dialog } from '../../ui/overlay/Dialog.tsx';
import { EnrollConfirm } from './EnrollConfirm.tsx';
import { EnrollStart } from './EnrollStart.tsx';

/** "Add an authenticator app": name it, scan or type the key, confirm with a code. */
export function EnrollFactorDialog({ onVerified }: { onVerified(factor: Factor): void }) {
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const [enrollment, setEnrollment] = useState<Enrollment | null>(null);
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['mfa.factors'] });

  const close = () => {
    setOpen(false);
    setEnrollment(null);
    void refresh();
  };

  return (
    <>
      <Button variant="primary" onClick={() => setOpen(true)}>
        Add an authenticator app
      </Button>
      <Dialog
        title="Add an authenticator app"
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
            onEnrolled={(started) => {
              setEnrollment(started);
              void refresh();
            }}
          />
        )}
      </Dialog>
    </>
  );
}
