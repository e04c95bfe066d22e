import { domainToASCII } from 'node:url';

/**
 * Email addresses and domain names have one stored form, and every path that takes one (the API's
 * bodies, social, OIDC and SAML sign-in, organizations' domains, SSO discovery) compares in it: the
 * same address typed or asserted in any of its spellings names the same account.
 */

const ASCII = /^[\x20-\x7e]*$/;

/**
 * A domain name as stored: without the root's trailing dot, lower case, an internationalised name in
 * its ASCII form (IDNA/UTS #46 punycode), so `Bücher.de`, `bücher.de.` and `xn--bcher-kva.de` are one
 * name, and a look-alike such as `exаmple.com` (Cyrillic а) is `xn--exmple-4nf.com`, never
 * `example.com`. Text that is no domain name comes back lower-cased, for the caller's check to refuse
 * (percent signs are not decoded, as a URL host's would be).
 */
export function canonicalDomain(raw: string): string {
  const name = raw.replace(/\.$/, '');
  if (ASCII.test(name) || name.includes('%')) return name.toLowerCase();
  return domainToASCII(name) || name.toLowerCase();
}

/**
 * An email address as stored: without surrounding white space, the local part lower-cased (addresses
 * are case-insensitive here, as at Auth0 and Logto), the domain as `canonicalDomain` has it.
 */
export function canonicalEmail(raw: string): string {
  const text = raw.trim();
  const at = text.lastIndexOf('@');
  if (at < 0) return text.toLowerCase();
  return `${text.slice(0, at).toLowerCase()}@${canonicalDomain(text.slice(at + 1))}`;
}

/** The dots UTS #46 takes as label separators: full stop, ideographic, fullwidth and halfwidth ones. */
const LABEL_DOTS = /[.\u3002\uff0e\uff61]/;

/**
 * A search text in the form stored addresses are in: after the last `@` (or throughout, when there is
 * none), each whole label that is not ASCII in its punycode (`bücher` → `xn--bcher-kva`), so that
 * `bob@bücher.de` and `bücher` find `bob@xn--bcher-kva.de`. A part of a label has no punycode of its
 * own: it is converted all the same and matches no stored address (a name still finds it as typed).
 */
export function addressSearchForm(text: string): string {
  if (ASCII.test(text)) return text;
  const at = text.lastIndexOf('@');
  const labels = text.slice(at + 1).split(LABEL_DOTS);
  const domain = labels.map((label) => (ASCII.test(label) ? label : domainToASCII(label) || label)).join('.');
  return `${text.slice(0, at + 1)}${domain}`;
}

/**
 * An address the API accepts, once canonical: zod's practical pattern (ASCII local part, dotted
 * domain), with a punycode top-level domain (`xn--p1ai`, .рф) allowed as well as a letters-only one.
 */
export const EMAIL_PATTERN =
  /^(?:[A-Za-z0-9_'+-]+\.)*[A-Za-z0-9_'+-]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9][A-Za-z0-9-]*\.)+(?:[A-Za-z]{2,}|xn--[A-Za-z0-9-]+)$/;
