import type { ReactNode } from 'react';

export interface Column<T> {
  header: string;
  cell: (row: T) => ReactNode;
  /** This column names the row (`<th scope="row">`): screen readers announce it with the row's other cells. */
  rowHeader?: boolean;
  className?: string;
}

/** A last column of buttons for each row. */
export interface RowActions<T> {
  cell: (row: T) => ReactNode;
  /** The column's header, for screen readers only. */
  label?: string;
  /** `actions` (a row of buttons) or `actions-narrow` (one small button). */
  className?: 'actions' | 'actions-narrow';
}

interface DataTableProps<T> {
  /** What the table lists, for screen readers (the page's heading already says it to everyone else). */
  caption: string;
  columns: readonly Column<T>[];
  rows: readonly T[];
  /** Omitted (or null) when the viewer may not act on the rows: the column is left out altogether. */
  actions?: RowActions<T> | null;
}

/** The dashboard's list of records: one row per record, one column per field, buttons last. */
export function DataTable<T extends { id: string }>({ caption, columns, rows, actions }: DataTableProps<T>) {
  return (
    <table className="table">
      <caption className="visually-hidden">{caption}</caption>
      <thead>
        <tr>
          {columns.map((column) => (
            <th scope="col" key={column.header}>
              {column.header}
            </th>
          ))}
          {actions ? (
            <th scope="col">
              <span className="visually-hidden">{actions.label ?? 'Actions'}</span>
            </th>
          ) : null}
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.id}>
            {columns.map((column) =>
              column.rowHeader ? (
                <th scope="row" key={column.header} className={column.className}>
                  {column.cell(row)}
                </th>
              ) : (
                <td key={column.header} className={column.className}>
                  {column.cell(row)}
                </td>
              ),
            )}
            {actions ? <td className={actions.className ?? 'actions'}>{actions.cell(row)}</td> : null}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
