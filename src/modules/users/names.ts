import { HIDDEN_TEXT, labelInput, toNfc } from '../../core/labels.ts';

/**
 * People's names, as every path keeps them: a label (core/labels.ts: trimmed, NFC, no hidden
 * characters) of at most 200 characters.
 */
export const NAME_MAX = 200;

export const nameInput = labelInput(NAME_MAX);

/** A name an identity provider sent, in the same form: hidden characters dropped, cut at a code point. */
export function providerName(raw: string): string | null {
  const name = Array.from(toNfc(raw).replace(new RegExp(HIDDEN_TEXT.source, 'gu'), '').trim())
    .slice(0, NAME_MAX)
    .join('')
    .trim();
  return name === '' ? null : name;
}
