import { useState } from 'react';
import { Button } from '../actions/Button.tsx';

/**
 * Copies `text` to the clipboard and says so. Browsers offer no clipboard to a page over plain http
 * at an address other than localhost (`navigator.clipboard` is missing there): the button then says
 * to copy by hand, as when the browser refuses.
 */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = () => {
    if (!window.isSecureContext || !('clipboard' in navigator)) {
      setState('failed');
      return;
    }
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
