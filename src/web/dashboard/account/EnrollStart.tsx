import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import type { Enrollment } from '../../api/types.ts';
import { Form } from '../../ui/forms/Form.tsx';
import { TextField } from '../../ui/forms/TextField.tsx';

/** Step 1 of adding an authenticator app: its name. */
export function EnrollStart({ onEnrolled }: { onEnrolled(enrollment: Enrollment): void }) {
  const [name, setName] = useState('Authenticator app');
  const enroll = useMutation({ mutationFn: () => api.mfa.enrollTotp.mutate({ name: name.trim() }), onSuccess: onEnrolled });
  return (
    <Form
      label="Name the authenticator app"
      onSubmit={() => enroll.mutate()}
      submitLabel="Continue"
      busy={enroll.isPending}
      error={enroll.error}
    >
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
