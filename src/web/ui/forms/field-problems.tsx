import { createContext, useContext, useLayoutEffect } from 'react';
import type { FieldProblem } from '../../../core/errors.ts';
import { isAbout, problemText } from './field-path.ts';

interface FieldProblems {
  /** The `details` of the form's last failed call. */
  details: readonly FieldProblem[];
  /** A field says which API field it edits, so its problems are shown by it and not in the form's banner; returns the undo. */
  claim(name: string): () => void;
}

const NONE: FieldProblems = { details: [], claim: () => () => undefined };

export const FieldProblemsContext = createContext<FieldProblems>(NONE);

/**
 * What the API said about the field `name` (its `details` entries, as sentences), for the field to show
 * under its input. A field without a name, or outside a `Form`, has none.
 */
export function useFieldProblem(name: string | undefined): string | undefined {
  const { details, claim } = useContext(FieldProblemsContext);
  useLayoutEffect(() => (name ? claim(name) : undefined), [name, claim]);
  if (!name) return undefined;
  const messages = details.filter((d) => isAbout(name, d.path)).map((d) => problemText(name, d.path, d.message));
  return messages.length > 0 ? messages.join(' ') : undefined;
}

/** The ids an input is described by: its hint and its problem, those it has. */
export function describedBy(...ids: (string | false | undefined)[]): string | undefined {
  const present = ids.filter(Boolean);
  return present.length > 0 ? present.join(' ') : undefined;
}

/** A field's problem, under its input, in the form's error colour. */
export function FieldError({ id, problem }: { id: string; problem: string | undefined }) {
  return problem ? (
    <p className="field-error" id={id}>
      {problem}
    </p>
  ) : null;
}
