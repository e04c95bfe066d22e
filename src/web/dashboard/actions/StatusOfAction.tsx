import type { Action } from '../../api/types.ts';
import { StatusBadge } from '../../ui/data/StatusBadge.tsx';
import { formatDateTime } from '../../ui/data/format.ts';

/** Draft or deployed, and which version runs at sign-in. */
export function StatusOfAction({ action }: { action: Action }) {
  return (
    <>
      <StatusBadge status={action.status} tone={action.status === 'deployed' ? 'good' : 'warn'} />
      <br />
      <small>
        {action.deployed_version === null
          ? 'Never deployed'
          : `Version ${action.deployed_version} runs since ${formatDateTime(action.deployed_at)}`}
      </small>
    </>
  );
}
