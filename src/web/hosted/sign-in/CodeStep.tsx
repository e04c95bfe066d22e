import { useMutation } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { publicApi } from '../../api/client.ts';
import type { Challenge, Tokens } from '../../api/types.ts';
import { Button } from '../../ui/actions/Button.tsx';
import { Form } from '../../ui/forms/Form.tsx';
import { endedChallenge } from './ended-challenge.ts';
import { forgetChallenge } from './kept-challenge.ts';

interface CodeStepProps {
  challenge: Challenge;
  onSignedIn(tokens: Tokens): void;
  /**
   * Back to the form the sign-in started from: the challenge can no longer be answered (this message
   * says why), or the person chose another account (no message).
   */
  onRestart(message: string | null): void;
}

/**
 * The second step of a sign-in: the six-digit code from the person's authenticator app. The page keeps
 * the step for a reload (kept-challenge.ts); the step forgets it once it succeeds or ends.
 */
export function CodeStep({ challenge, onSignedIn, onRestart }: CodeStepProps) {
  const [code, setCode] = useState('');
  const input = useRef<HTMLInputElement>(null);
  const restart = (message: string | null) => {
    forgetChallenge();
    onRestart(message);
  };
  const verify = useMutation({
    mutationFn: () => publicApi.mfa.verifyChallenge.mutate({ mfa_token: challenge.mfa_token, code: code.trim() }),
    onSuccess: (tokens) => {
      forgetChallenge();
      onSignedIn(tokens);
    },
    onError: (error) => {
      const ended = endedChallenge(error);
      if (ended !== null) {
        restart(ended);
        return;
      }
      setCode('');
      input.current?.focus();
    },
  });

  useEffect(() => input.current?.focus(), []);

  return (
    <Form
      label="Two-step verification"
      onSubmit={() => verify.mutate()}
      submitLabel="Verify"
      busy={verify.isPending}
      error={verify.error}
      secondary={
        <Button variant="link" onClick={() => restart(null)}>
          Use another account
        </Button>
      }
    >
      <div className="field">
        <label htmlFor="mfa-code">Authentication code</label>
        <input
          ref={input}
          id="mfa-code"
          name="code"
          inputMode="numeric"
          autoComplete="one-time-code"
          pattern="[0-9]{6}"
          maxLength={6}
          required
          value={code}
          onChange={(event) => setCode(event.target.value.replace(/\D/g, ''))}
          aria-describedby="mfa-code-hint"
        />
        <p className="hint" id="mfa-code-hint">
          Open your authenticator app and enter the six-digit code it shows for this account.
        </p>
      </div>
    </Form>
  );
}
