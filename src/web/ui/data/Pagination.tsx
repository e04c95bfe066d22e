import { Button } from '../actions/Button.tsx';

interface PaginationProps {
  meta: { total: number; page: number; per_page: number };
  onPage(page: number): void;
  /** What is counted ("users"). */
  noun: string;
}

export function Pagination({ meta, onPage, noun }: PaginationProps) {
  const pages = Math.max(1, Math.ceil(meta.total / meta.per_page));
  const first = meta.total === 0 ? 0 : (meta.page - 1) * meta.per_page + 1;
  const last = Math.min(meta.total, meta.page * meta.per_page);
  return (
    <nav className="pagination" aria-label={`Pages of ${noun}`}>
      <p aria-live="polite">
        {first}–{last} of {meta.total} {noun} · page {meta.page} of {pages}
      </p>
      <div className="pagination-buttons">
        <Button className="button-small" disabled={meta.page <= 1} onClick={() => onPage(meta.page - 1)}>
          Previous page
        </Button>
        <Button className="button-small" disabled={meta.page >= pages} onClick={() => onPage(meta.page + 1)}>
          Next page
        </Button>
      </div>
    </nav>
  );
}
