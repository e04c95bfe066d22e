import { useEffect, useRef, type ReactNode } from 'react';

/**
 * The frame of the hosted pages (sign-in, reset, invitation): one centred card. Its heading takes the
 * focus when the page or its step changes, so screen readers announce where the person is.
 */
export function HostedLayout({ title, subtitle, children }: { title: string; subtitle?: ReactNode; children: ReactNode }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · Identity`;
    heading.current?.focus();
  }, [title]);
  return (
    <main className="hosted">
      <div className="hosted-card">
        <p className="hosted-brand" aria-hidden="true">
          <img src="/dashboard/favicon.svg" alt="" width="28" height="28" /> Identity
        </p>
        <h1 ref={heading} tabIndex={-1}>
          {title}
        </h1>
        {subtitle ? <p className="hosted-subtitle">{subtitle}</p> : null}
        {children}
      </div>
    </main>
  );
}
