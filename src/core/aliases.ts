import { z } from 'zod';

/** How an alias field describes itself in the OpenAPI document: `aliasOf('event_types', "Logto's and WorkOS's name")`. */
export function aliasOf(canonical: string, whose: string): string {
  return `Alias of \`${canonical}\` (${whose}); send one or the other`;
}

/**
 * An input object that also takes other names for some of its fields (`{ alias: canonical }`), as
 * other identity services spell them. Each alias is declared in the object as an optional field (so the
 * OpenAPI document lists it, described with `aliasOf`) and is moved onto its canonical field before the
 * object is parsed: the canonical field's rules and default apply whichever name was sent, and handlers
 * see only the canonical name. Both names at once is 400 with a details entry on the alias.
 */
export function withAliases<S extends z.ZodObject, const A extends Record<string, keyof z.output<S> & string>>(schema: S, aliases: A) {
  return (
    z
      .preprocess((raw: z.input<S>, ctx) => {
        if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return raw;
        let body: Record<string, unknown> = raw;
        for (const [alias, canonical] of Object.entries(aliases)) {
          if (body[alias] === undefined) continue;
          if (body[canonical] !== undefined) {
            ctx.addIssue({ code: 'custom', path: [alias], message: `send ${canonical} or ${alias}, not both` });
            continue;
          }
          const { [alias]: value, ...rest } = body;
          body = { ...rest, [canonical]: value };
        }
        return body;
      }, schema)
      // The aliases were moved away before the object was parsed; this tells the type so.
      .transform((value) => value as Omit<z.output<S>, keyof A>)
  );
}
