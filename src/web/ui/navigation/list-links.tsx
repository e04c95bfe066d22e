import type { ReactNode } from 'react';
import { Link, useLocation, useNavigate } from 'react-router';
import { returnAddress, type FromList } from './list-return.ts';

/** The state to open one of the current list's items with: the list's address as it is now. */
export function useFromList(): FromList {
  const { pathname, search } = useLocation();
  return { list: pathname + search };
}

/** The address of the list at `listPath` as it was when it opened this screen (its first page otherwise). */
export function useListAddress(listPath: string): string {
  return returnAddress(useLocation().state, listPath);
}

/** Opens `to` from the current list, which the opened screen's way back returns to as it is now. */
export function useOpenFromList(): (to: string) => void {
  const navigate = useNavigate();
  const from = useFromList();
  return (to) => void navigate(to, { state: from });
}

/** A link from a list to one of its items; the item's back link returns to the list's page and filters. */
export function ItemLink({
  to,
  className,
  ariaLabel,
  children,
}: {
  to: string;
  className?: string;
  ariaLabel?: string;
  children: ReactNode;
}) {
  return (
    <Link to={to} state={useFromList()} className={className} aria-label={ariaLabel}>
      {children}
    </Link>
  );
}

/** The way back from an item to its list (`listPath`), as the list was when it opened the item. */
export function BackToList({ listPath, children }: { listPath: string; children: ReactNode }) {
  return (
    <p>
      <Link to={useListAddress(listPath)}>{children}</Link>
    </p>
  );
}
