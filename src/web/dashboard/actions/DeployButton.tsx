import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import type { Action } from '../../api/types.ts';
import { Button } from '../../ui/actions/Button.tsx';
import { Notice } from '../../ui/feedback/Notice.tsx';
import { ActionErrorAlert } from './ActionErrorAlert.tsx';

/** Compiles the saved code and makes it the version sign-ins run; a syntax error comes back with its line. */
export function DeployButton({ action }: { action: Action }) {
  const queryClient = useQueryClient();
  const deploy = useMutation({
    mutationFn: () => api.actions.deploy.mutate({ id: action.id }),
    onSuccess: async (deployed) => {
      queryClient.setQueryData(['actions.get', action.id], deployed);
      await queryClient.invalidateQueries({ queryKey: ['actions.list'] });
    },
  });
  return (
    <div className="deploy">
      <Button variant="primary" busy={deploy.isPending} onClick={() => deploy.mutate()}>
        Deploy
      </Button>
      {deploy.data ? <Notice>Version {deploy.data.deployed_version} is deployed: sign-ins run it now.</Notice> : null}
      <ActionErrorAlert error={deploy.error} />
    </div>
  );
}
