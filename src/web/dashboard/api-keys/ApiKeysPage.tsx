import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import { useCan } from '../../session/CurrentUser.tsx';
import { ConfirmButton } from '../../ui/actions/ConfirmButton.tsx';
import { QueryState } from '../../ui/data/QueryState.tsx';
import { formatDateTime } from '../../ui/data/format.ts';
import { EmptyState } from '../../ui/feedback/EmptyState.tsx';
import { PageHeader } from '../../ui/layout/PageHeader.tsx';
import { ReadOnlyNote } from '../../ui/layout/ReadOnlyNote.tsx';
import { CreateApiKeyDialog } from './CreateApiKeyDialog.tsx';

export function ApiKeysPage() {
  const can = useCan();
  const canWrite = can('api_keys:write');
  const queryClient = useQueryClient();
  const keys = useQuery({ queryKey: ['apiKeys.list', { per_page: 100 }], queryFn: () => api.apiKeys.list.query({ per_page: 100 }) });
  const revoke = useMutation({
    mutationFn: (id: string) => api.apiKeys.revoke.mutate({ id }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['apiKeys.list'] }),
  });
  return (
    <>
      <PageHeader
        title="API keys"
        description="Secret keys your backends use to manage this workspace."
        actions={canWrite ? <CreateApiKeyDialog /> : null}
      />
      {canWrite ? null : <ReadOnlyNote permission="api_keys:write" />}
      <QueryState
        query={keys}
        loading="Loading API keys…"
        isEmpty={(page) => page.data.length === 0}
        empty={<EmptyState title="No API keys" />}
      >
        {(page) => (
          <table className="table">
            <caption className="visually-hidden">API keys</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Key</th>
                <th scope="col">Created</th>
                {canWrite ? (
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                ) : null}
              </tr>
            </thead>
            <tbody>
              {page.data.map((k) => (
                <tr key={k.id}>
                  <th scope="row">{k.name}</th>
                  <td>
                    <code>{k.prefix}…</code>
                  </td>
                  <td>{formatDateTime(k.created_at)}</td>
                  {canWrite ? (
                    <td className="actions">
                      <ConfirmButton
                        label="Revoke"
                        ariaLabel={`Revoke ${k.name}`}
                        title={`Revoke ${k.name}?`}
                        onConfirm={() => revoke.mutateAsync(k.id)}
                      >
                        Backends using it are refused from now on.
                      </ConfirmButton>
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </QueryState>
    </>
  );
}
