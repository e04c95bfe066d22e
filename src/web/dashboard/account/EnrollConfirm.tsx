import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import type { Enrollment, Factor } from '../../api/types.ts';
import { Form } from '../../ui/forms/Form.tsx';
import { TextField } from '../../ui/forms/TextField.tsx';
import { CopyButton } from '../../ui/secret/CopyButton.tsx';

/** Step 2: scan the QR code or type the key, then prove it with a code; until then the factor stays pending. */
export function EnrollConfirm({ enrollment, onVerified }: { enrollment: Enrollment; onVerified(factor: Factor): void }) {
  const [code, setCode] = useState('');
  const verify = useMutation({
    mutationFn: () => api.mfa.verifyFactor.mutate({ id: enrollment.factor.id, code: code.trim() }),
    onSuccess: onVerified,
    onError: () => setCode(''),
  });
  return (
    <div className="enroll">
      <ol className="steps">
        <li>
          <p>Scan this QR code with your authenticator app:</p>
          <img
            className="qr"
            src={enrollment.qr_code_data_uri}
            alt="QR code of the setup key, for your authenticator app to scan"
            width="200"
            height="200"
          />
        </li>
        <li>
          <p>Or type the key into the app (time-based, six digits):</p>
          <div className="setup-key">
            <label htmlFor="setup-key">Setup key</label>
            <input id="setup-key" className="mono" readOnly value={enrollment.secret} spellCheck={false} />
            <CopyButton text={enrollment.secret} label="Copy key" />
          </div>
        </li>
        <li>
          <Form
            label="Confirm the authenticator app"
            onSubmit={() => verify.mutate()}
            submitLabel="Confirm"
            busy={verify.isPending}
            error={verify.error}
          >
            <TextField
              label="Six-digit code from the app"
              name="code"
              value={code}
              onChange={(value) => setCode(value.replace(/\D/g, ''))}
              inputMode="numeric"
              autoComplete="one-time-code"
              pattern="[0-9]{6}"
              maxLength={6}
              required
            />
          </Form>
        </li>
      </ol>
    </div>
  );
}
