import { Button } from '../actions/Button.tsx';

/** The one way out of a dialog whose result was shown (a secret shown this once). */
export function DoneButton({ onDone }: { onDone(): void }) {
  return (
    <div className="form-actions">
      <Button variant="primary" onClick={onDone}>
        Done
      </Button>
    </div>
  );
}
