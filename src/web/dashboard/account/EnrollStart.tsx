import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import { FormProblem } from '../../api/errors.ts';
import type { Enrollment, Factor } from '../../api/types.ts';
import { Form } from '../../ui/forms/Form.tsx';
import { TextField } from '../../ui/forms/TextField.tsx';

/**
 * Starts over an app left `Pending verification`: its key was shown once and cannot be shown again, so
 * it is removed (unless confirmed meanwhile, in another tab) before a new one is made in its place.
 */
async function restart(pending: Factor, name: string): Promise<Enrollment> {
  const now = await api.mfa.listFactors.query({ per_page: 100 });
  const current = now.data.find((f) => f.id === pending.id);
  if (current?.status === 'Verified') throw new FormProblem(`${pending.name} was confirmed in the meantime: there is nothing to finish.`);
  if (current) await api.mfa.removeFactor.mutate({ id: pending.id });
  return api.mfa.enrollTotp.mutate({ name });
}

/** Step 1 of adding an authenticator app: its name. With `pending`, the setup of that unconfirmed app starts again. */
export function EnrollStart({ onEnrolled, pending }: { onEnrolled(enrollment: Enrollment): void; pending?: Factor }) {
  const [name, setName] = useState(pending?.name ?? 'Authenticator app');
  const enroll = useMutation({
    mutationFn: () => (pending ? restart(pending, name.trim()) : api.mfa.enrollTotp.mutate({ name: name.trim() })),
    onSuccess: onEnrolled,
  });
  return (
    <Form
      label="Name the authenticator app"
      onSubmit={() => enroll.mutate()}
      submitLabel={pending ? 'Show a new key' : 'Continue'}
      busy={enroll.isPending}
      error={enroll.error}
    >
      {pending ? (
        <p>
          The key shown when you added {pending.name} is shown only once. Continue to get a new key and QR code for it; the old key stops
          working.
        </p>
      ) : null}
      <TextField
        label="Name"
        name="name"
        value={name}
        onChange={setName}
        required
        maxLength={100}
        hint="So you can tell your apps apart, for example “Phone” or “Password manager”."
      />
    </Form>
  );
}
