import { AppError } from '../../core/errors.ts';

/** The refusal of a locked account: for fifteen minutes after failed sign-ins, or by an admin until unlocked (no end). */
export function accountLocked(lockedUntil: Date | null): AppError {
  const message = lockedUntil
    ? 'This account is locked after too many failed sign-ins; try again later or ask an admin'
    : 'This account is locked; ask an admin to unlock it';
  return new AppError('ACCOUNT_LOCKED', message, { keepChanges: true });
}
