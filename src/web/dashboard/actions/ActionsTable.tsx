import { Link } from 'react-router';
import type { Action } from '../../api/types.ts';
import { formatDateTime } from '../../ui/data/format.ts';
import { DeleteActionButton } from './DeleteActionButton.tsx';
import { StatusOfAction } from './StatusOfAction.tsx';

/** Actions with their trigger and deploy state; the name opens the editor. */
export function ActionsTable({ actions, canWrite }: { actions: Action[]; canWrite: boolean }) {
  return (
    <table className="table">
      <caption className="visually-hidden">Actions</caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Trigger</th>
          <th scope="col">Status</th>
          <th scope="col">Updated</th>
          {canWrite ? (
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          ) : null}
        </tr>
      </thead>
      <tbody>
        {actions.map((a) => (
          <tr key={a.id}>
            <th scope="row">
              <Link to={`/dashboard/actions/${a.id}`}>{a.name}</Link>
            </th>
            <td>
              <code>{a.trigger}</code>
            </td>
            <td>
              <StatusOfAction action={a} />
            </td>
            <td>{formatDateTime(a.updated_at)}</td>
            {canWrite ? (
              <td className="actions-narrow">
                <DeleteActionButton action={a} />
              </td>
            ) : null}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
