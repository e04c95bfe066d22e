import { z } from 'zod';

/**
 * People's names, as every path keeps them: trimmed, in Unicode NFC (so a name typed with decomposed
 * accents is found by a search typed with composed ones), at most 200 code points, and without the
 * characters that hide or reorder text where the name is shown: control characters (C0 and C1: a
 * newline, a bell) and the bidirectional embeddings, overrides and isolates (U+202A–U+202E,
 * U+2066–U+2069; `Invoice\u202Efdp.exe` reads as `Invoiceexe.pdf`).
 */
export const NAME_MAX = 200;
const HIDDEN = /[\p{Cc}\u202a-\u202e\u2066-\u2069]/u;

const toNfc = (text: string): string => text.normalize('NFC');

export const nameInput = z
  .string()
  .trim()
  .overwrite(toNfc)
  .min(1)
  .max(NAME_MAX)
  .refine((name) => !HIDDEN.test(name), 'must not contain control characters or bidirectional overrides');

/** Search text, compared with names in the form they are kept in. */
export const searchInput = z.string().trim().overwrite(toNfc).max(200);

/** A name an identity provider sent, in the same form: hidden characters dropped, cut at a code point. */
export function providerName(raw: string): string | null {
  const name = Array.from(toNfc(raw).replace(new RegExp(HIDDEN.source, 'gu'), '').trim())
    .slice(0, NAME_MAX)
    .join('')
    .trim();
  return name === '' ? null : name;
}
