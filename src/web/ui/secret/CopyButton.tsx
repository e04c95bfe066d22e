import { useState } from 'react';
import { Button } from '../actions/Button.tsx';

/** Copies `text` to the clipboard and says so. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = () => {
    navigator.clipboard.writeText(text).then(
      () => setState('copied'),
      () => setState('failed'),
    );
  };
  return (
    <>
      <Button className="button-small" onClick={copy}>
        {label}
      </Button>
      <span className="copy-status" role="status">
        {state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed: select the text and copy it yourself' : ''}
      </span>
    </>
  );
}
