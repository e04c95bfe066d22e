import { z } from 'zod';
import { emailInput, passwordInput } from '../users/users.schema.ts';
import { labelInput } from '../../core/labels.ts';

export const createWorkspaceInput = z.strictObject({
  name: labelInput(200),
  owner: z.strictObject({ email: emailInput, password: passwordInput.optional() }),
});
export type CreateWorkspaceInput = z.infer<typeof createWorkspaceInput>;

export const createdWorkspaceOutput = z
  .object({
    workspace: z.object({ id: z.string(), name: z.string() }),
    api_key: z.string(),
    owner: z.object({
      id: z.string(),
      email: z.string(),
      /** Present only when the service chose the password; shown this once. */
      password: z.string().optional(),
    }),
  })
  .meta({ id: 'CreatedWorkspace' });
export type CreatedWorkspace = z.infer<typeof createdWorkspaceOutput>;
