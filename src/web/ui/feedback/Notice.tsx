import type { ReactNode } from 'react';

/** A success or information message, read out politely. */
export function Notice({ children, tone = 'success' }: { children: ReactNode; tone?: 'success' | 'info' }) {
  return (
    <div className={`alert alert-${tone}`} role="status">
      {children}
    </div>
  );
}
