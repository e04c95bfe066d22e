import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import { FormProblem } from '../../api/errors.ts';
import type { Action, SampleEvent } from '../../api/types.ts';
import { Button } from '../../ui/actions/Button.tsx';
import { TextArea } from '../../ui/forms/TextArea.tsx';
import { ActionErrorAlert } from './ActionErrorAlert.tsx';
import { SAMPLE_EVENT } from './blank-action.ts';
import { TestResultView } from './TestResultView.tsx';

function parseEvent(text: string): SampleEvent {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (failure) {
    throw new FormProblem(`The sample event is not valid JSON: ${failure instanceof Error ? failure.message : String(failure)}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new FormProblem('The sample event must be a JSON object.');
  // The server validates the shape and answers field problems; here it only has to be an object.
  return parsed as SampleEvent;
}

/** Runs the saved code against a sample event, without signing anyone in. */
export function ActionTestPanel({ action }: { action: Action }) {
  const [event, setEvent] = useState(SAMPLE_EVENT);
  const run = useMutation({ mutationFn: () => api.actions.test.mutate({ id: action.id, event: parseEvent(event) }) });
  return (
    <>
      <TextArea
        label="Sample event (JSON)"
        className="code-editor"
        value={event}
        onChange={setEvent}
        rows={9}
        spellCheck={false}
        hint="user (id, email, name, roles, metadata, mfa_enabled) and request (ip, user_agent); what is left out comes from a sample user."
      />
      <div className="form-actions">
        <Button busy={run.isPending} onClick={() => run.mutate()}>
          Run test
        </Button>
      </div>
      <ActionErrorAlert error={run.error} />
      {run.data ? <TestResultView result={run.data} /> : null}
    </>
  );
}
