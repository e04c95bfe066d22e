import { useEffect, useRef, type ReactNode } from 'react';

/**
 * The page's title. On arrival it takes the focus (so a screen reader announces the new page after a
 * client-side navigation) and names the browser tab.
 */
export function PageHeader({ title, description, actions }: { title: string; description?: ReactNode; actions?: ReactNode }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · Identity`;
    heading.current?.focus();
  }, [title]);
  return (
    <header className="page-header">
      <div>
        <h1 ref={heading} tabIndex={-1}>
          {title}
        </h1>
        {description ? <p className="page-description">{description}</p> : null}
      </div>
      {actions ? <div className="page-actions">{actions}</div> : null}
    </header>
  );
}
