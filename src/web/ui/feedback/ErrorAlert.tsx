import { problemOf } from '../../api/errors.ts';

/** A failed call, as the API explained it; field problems listed under the message. Announced by screen readers. */
export function ErrorAlert({ error, id }: { error: unknown; id?: string }) {
  if (!error) return null;
  const problem = problemOf(error);
  return (
    <div className="alert alert-error" role="alert" id={id}>
      <p>{problem.message}</p>
      {problem.details.length > 0 && (
        <ul>
          {problem.details.map((d) => (
            <li key={`${d.path}:${d.message}`}>
              {d.path ? <strong>{d.path}</strong> : null} {d.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
