import { z } from 'zod';

/**
 * The characters that hide or reorder text where it is shown: control characters (C0 and C1: a
 * newline, a bell) and the bidirectional embeddings, overrides and isolates (U+202A–U+202E,
 * U+2066–U+2069; `Invoice\u202Efdp.exe` reads as `Invoiceexe.pdf`). An admin reading a group, role or
 * application list must see the label as it is.
 */
export const HIDDEN_TEXT = /[\p{Cc}\u202a-\u202e\u2066-\u2069]/u;

export const toNfc = (text: string): string => text.normalize('NFC');

/**
 * A label people read (a person's, group's, role's or application's name): trimmed, in Unicode NFC (so
 * names typed with decomposed accents compare equal to composed ones, unique names included), 1 to
 * `max` characters, without hidden characters.
 */
export function labelInput(max: number) {
  return z
    .string()
    .trim()
    .overwrite(toNfc)
    .min(1)
    .max(max)
    .refine((label) => !HIDDEN_TEXT.test(label), 'must not contain control characters or bidirectional overrides');
}

/** Search text compared with labels: trimmed and in NFC, the form labels are kept in, so accents typed decomposed find them too. */
export const searchInput = z.string().trim().overwrite(toNfc).max(200);
