import { useId } from 'react';
import { CopyButton } from './CopyButton.tsx';

/** A secret the API shows this one time: displayed, copyable, and said to be unrecoverable. */
export function SecretOnce({ label, value }: { label: string; value: string }) {
  const id = useId();
  return (
    <div className="secret-once">
      <p className="secret-label" id={id}>
        {label}
      </p>
      <code className="secret-value" aria-labelledby={id}>
        {value}
      </code>
      <div className="secret-actions">
        <CopyButton text={value} />
      </div>
      <p className="hint">Copy it now: it is shown this once and cannot be read again.</p>
    </div>
  );
}
