import { FormProblem } from '../../api/errors.ts';

/** Throws the problem a person sees when the two copies of a new password differ. */
export function assertPasswordsMatch(password: string, confirmation: string): void {
  if (password !== confirmation) throw new FormProblem('The two passwords are not the same.');
}
