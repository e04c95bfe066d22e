import { problemOf } from '../../api/errors.ts';

interface ErrorAlertProps {
  error: unknown;
  id?: string;
  /** Whether a field of the form shows the problems at this path already (`Form` passes it). */
  shownByField?: (path: string) => boolean;
}

/**
 * A failed call, as the API explained it; field problems no field shows listed under the message.
 * Nothing when every problem is shown by its field. Announced by screen readers.
 */
export function ErrorAlert({ error, id, shownByField = () => false }: ErrorAlertProps) {
  if (!error) return null;
  const problem = problemOf(error);
  const loose = problem.details.filter((d) => !shownByField(d.path));
  if (problem.details.length > 0 && loose.length === 0) return null;
  return (
    <div className="alert alert-error" role="alert" id={id}>
      <p>{problem.message}</p>
      {loose.length > 0 && (
        <ul>
          {loose.map((d) => (
            <li key={`${d.path}:${d.message}`}>
              {d.path ? <strong>{d.path}</strong> : null} {d.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
