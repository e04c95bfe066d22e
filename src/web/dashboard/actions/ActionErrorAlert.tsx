import { problemOf } from '../../api/errors.ts';
import { ErrorAlert } from '../../ui/feedback/ErrorAlert.tsx';

/** A failed deploy or test; a 503 says plainly that this server cannot run actions at all. */
export function ActionErrorAlert({ error }: { error: unknown }) {
  if (!error) return null;
  if (problemOf(error).code !== 'UNAVAILABLE') return <ErrorAlert error={error} />;
  return (
    <div className="alert alert-error" role="alert">
      <p>Actions cannot run on this server: its sandbox (the isolated-vm package) is not installed.</p>
      <p>Code can still be saved. Ask whoever runs the service to install it to deploy and test actions.</p>
    </div>
  );
}
