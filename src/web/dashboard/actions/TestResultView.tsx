import type { ActionTestResult } from '../../api/types.ts';
import { StatusBadge } from '../../ui/data/StatusBadge.tsx';

/** What a test run decided, the claims it set, whether it asked for a second factor, and what it logged. */
export function TestResultView({ result }: { result: ActionTestResult }) {
  return (
    <section className="test-result" aria-label="Test result">
      <dl className="facts">
        <dt>Decision</dt>
        <dd>
          <StatusBadge status={result.decision} tone={result.decision === 'allow' ? 'good' : 'bad'} />
          {result.reason ? ` ${result.reason}` : null}
        </dd>
        <dt>Second factor required</dt>
        <dd>{result.require_second_factor ? 'Yes' : 'No'}</dd>
        <dt>Duration</dt>
        <dd>{Math.round(result.duration_ms)} ms</dd>
        {result.error ? (
          <>
            <dt>Error</dt>
            <dd>
              <code>{result.error.kind}</code> {result.error.line === null ? '' : `on line ${result.error.line}: `}
              {result.error.message}
            </dd>
          </>
        ) : null}
      </dl>
      <h3>Claims</h3>
      <pre className="code-block" aria-label="Claims">
        {JSON.stringify(result.claims, null, 2)}
      </pre>
      <h3>Logs</h3>
      {result.logs.length === 0 ? (
        <p className="hint">Nothing logged.</p>
      ) : (
        <ol className="code-block logs" aria-label="Logs">
          {result.logs.map((line, index) => (
            <li key={`${index}:${line.message}`}>
              [{line.level}] {line.message}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
