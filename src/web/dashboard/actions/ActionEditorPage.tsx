import { useQuery } from '@tanstack/react-query';
import { useNavigate, useParams } from 'react-router';
import { api } from '../../api/client.ts';
import type { Action } from '../../api/types.ts';
import { useCan } from '../../session/CurrentUser.tsx';
import { QueryState } from '../../ui/data/QueryState.tsx';
import { PageHeader } from '../../ui/layout/PageHeader.tsx';
import { ReadOnlyNote } from '../../ui/layout/ReadOnlyNote.tsx';
import { Section } from '../../ui/layout/Section.tsx';
import { BackToList, useListAddress } from '../../ui/navigation/list-links.tsx';
import { ActionCodeForm } from './ActionCodeForm.tsx';
import { ActionTestPanel } from './ActionTestPanel.tsx';
import { DeleteActionButton } from './DeleteActionButton.tsx';
import { DeployButton } from './DeployButton.tsx';
import { StatusOfAction } from './StatusOfAction.tsx';

/** A viewer reads the code; nothing to save, deploy or run. */
function ReadOnlyCode({ action }: { action: Action }) {
  return (
    <>
      <ReadOnlyNote permission="actions:write" />
      <pre className="code-block" aria-label="Code">
        {action.code}
      </pre>
    </>
  );
}

function Editor({ action, canWrite }: { action: Action; canWrite: boolean }) {
  const navigate = useNavigate();
  const list = useListAddress('/dashboard/actions');
  return (
    <>
      <PageHeader
        title={action.name}
        description={<StatusOfAction action={action} />}
        actions={canWrite ? <DeleteActionButton action={action} onDeleted={() => void navigate(list)} /> : null}
      />
      <BackToList listPath="/dashboard/actions">Back to actions</BackToList>
      {canWrite ? (
        <>
          <Section title="Code">
            <ActionCodeForm key={action.id} action={action} />
          </Section>
          <Section title="Deploy" description="Compiles the saved code; sign-ins run it from then on.">
            <DeployButton action={action} />
          </Section>
          <Section title="Test" description="Runs the saved code against a sample event; nobody is signed in.">
            <ActionTestPanel action={action} />
          </Section>
        </>
      ) : (
        <ReadOnlyCode action={action} />
      )}
    </>
  );
}

/** One action: edit its code, deploy it, test it. */
export function ActionEditorPage() {
  const { id = '' } = useParams();
  const canWrite = useCan()('actions:write');
  const action = useQuery({ queryKey: ['actions.get', id], queryFn: () => api.actions.get.query({ id }) });
  return (
    <QueryState query={action} loading="Loading the action…">
      {(a) => <Editor action={a} canWrite={canWrite} />}
    </QueryState>
  );
}
