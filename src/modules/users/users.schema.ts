import { z } from 'zod';
import { PASSWORD_MAX, PASSWORD_MIN } from '../../core/passwords.ts';
import { pageOf, pageParams } from '../../core/pagination.ts';
import { USER_STATUSES } from './user.entity.ts';

export const emailInput = z
  .email('must be an email address')
  .max(254)
  .transform((e) => e.toLowerCase());
export const passwordInput = z
  .string()
  .min(PASSWORD_MIN, `must be at least ${PASSWORD_MIN} characters`)
  .max(PASSWORD_MAX, `must be at most ${PASSWORD_MAX} characters`);

export const userOutput = z
  .object({
    id: z.string(),
    email: z.string(),
    name: z.string().nullable(),
    status: z.enum(USER_STATUSES),
    created_at: z.string(),
    updated_at: z.string(),
    last_sign_in_at: z.string().nullable(),
  })
  .meta({ id: 'User' });
export type UserView = z.infer<typeof userOutput>;

export const createUserInput = z.strictObject({
  email: emailInput,
  password: passwordInput,
  name: z.string().trim().min(1).max(200).optional(),
});
export type CreateUserInput = z.infer<typeof createUserInput>;

export const listUsersInput = z
  .object({
    q: z.string().trim().max(200).optional(),
    status: z.enum(USER_STATUSES).optional(),
    ...pageParams,
  })
  .prefault({});
export type ListUsersInput = z.infer<typeof listUsersInput>;

export const userIdInput = z.object({ id: z.string().max(100) });

export const userPage = pageOf(userOutput);
