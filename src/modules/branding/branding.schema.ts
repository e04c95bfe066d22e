import { z } from 'zod';
import { labelInput } from '../../core/labels.ts';

/** `#rrggbb`, kept as written (hex digits in either case): safe to write into a stylesheet as it is. */
const color = z.string().regex(/^#[0-9a-fA-F]{6}$/, 'must be a color written #rrggbb');

/**
 * An absolute https URL on a domain name (no address, no user information), at most 2,000 characters.
 * The hosted pages show it in an `<img>`, and their CSP then allows images from its origin only.
 */
const logoUrl = z
  .url({ protocol: /^https$/, hostname: z.regexes.domain, error: 'must be an https:// URL on a domain name' })
  .max(2000)
  .refine((v) => {
    const url = new URL(v);
    return !url.username && !url.password;
  }, 'must not contain a user name or password')
  .transform((v) => new URL(v).href);

/** Every field may be `null`, which puts its default back. */
export const updateBrandingInput = z.strictObject({
  name: labelInput(100).nullable().optional(),
  logo_url: logoUrl.nullable().optional(),
  primary_color: color.nullable().optional(),
  background_color: color.nullable().optional(),
  support_email: z.email().max(254).nullable().optional(),
});
export type UpdateBrandingInput = z.infer<typeof updateBrandingInput>;

export const brandingOutput = z
  .object({
    name: z.string().describe('Shown on hosted pages and in emails; the workspace name unless set'),
    logo_url: z.string().nullable(),
    primary_color: z.string().describe('#rrggbb: buttons and links'),
    background_color: z.string().describe('#rrggbb: the page behind the hosted forms'),
    support_email: z.string().nullable(),
    customized: z.boolean().describe('false while nothing has been set (every value is a default)'),
    updated_at: z.string().nullable(),
  })
  .meta({ id: 'Branding' });
export type BrandingView = z.infer<typeof brandingOutput>;
