/**
 * Whether a field problem of the API (`details[].path`: `email`, `redirect_uris.0`, `sso.default_role`)
 * is about the field the form names `name`: the field itself or anything inside it (an item of a list).
 */
export function isAbout(name: string, path: string): boolean {
  return path === name || path.startsWith(`${name}.`);
}

/** The API writes a problem to follow its field's name ("email must be an email address"); alone under the field it starts a sentence. */
export function asSentence(message: string): string {
  return message.charAt(0).toUpperCase() + message.slice(1);
}

/**
 * A problem as its field shows it: a sentence, preceded by which entry of a list it is about when the
 * API named one (`redirect_uris.1` under "Redirect URIs" reads "Entry 2: …"), so two entries refused for
 * the same reason are told apart.
 */
export function problemText(name: string, path: string, message: string): string {
  const entry = /^\.(\d+)(?:\.|$)/.exec(path.slice(name.length));
  return entry ? `Entry ${Number(entry[1]) + 1}: ${message}` : asSentence(message);
}
