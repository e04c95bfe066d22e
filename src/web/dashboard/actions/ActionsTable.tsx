import type { Action } from '../../api/types.ts';
import { DataTable } from '../../ui/data/DataTable.tsx';
import { formatDateTime } from '../../ui/data/format.ts';
import { ItemLink } from '../../ui/navigation/list-links.tsx';
import { DeleteActionButton } from './DeleteActionButton.tsx';
import { StatusOfAction } from './StatusOfAction.tsx';

/** Actions with their trigger and deploy state; the name opens the editor. */
export function ActionsTable({ actions, canWrite }: { actions: Action[]; canWrite: boolean }) {
  return (
    <DataTable
      caption="Actions"
      rows={actions}
      columns={[
        { header: 'Name', rowHeader: true, cell: (a) => <ItemLink to={`/dashboard/actions/${a.id}`}>{a.name}</ItemLink> },
        { header: 'Trigger', cell: (a) => <code>{a.trigger}</code> },
        { header: 'Status', cell: (a) => <StatusOfAction action={a} /> },
        { header: 'Updated', cell: (a) => formatDateTime(a.updated_at) },
      ]}
      actions={canWrite ? { className: 'actions-narrow', cell: (a) => <DeleteActionButton action={a} /> } : null}
    />
  );
}
