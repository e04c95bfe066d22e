import type { ButtonHTMLAttributes } from 'react';

interface ButtonProps extends ButtonHTMLAttributes<HTMLButtonElement> {
  variant?: 'primary' | 'secondary' | 'danger' | 'link';
  /** A call is running: the button says so and cannot be pressed again. */
  busy?: boolean;
}

export function Button({ variant = 'secondary', busy = false, disabled, className, children, type = 'button', ...rest }: ButtonProps) {
  return (
    <button
      {...rest}
      type={type}
      className={['button', `button-${variant}`, className].filter(Boolean).join(' ')}
      disabled={disabled || busy}
      aria-busy={busy || undefined}
    >
      {busy ? <span className="spinner spinner-small" aria-hidden="true" /> : null}
      {children}
    </button>
  );
}
