import { promises as dns } from 'node:dns';

/** Where and what a workspace publishes to prove it controls a domain. */
export const TXT_LABEL = '_identity-verify';
export const TXT_VALUE_PREFIX = 'identity-verify=';

export type TxtCheck = { ok: true } | { ok: false; reason: string };

/**
 * Looks up the TXT records at `name` (through `servers` when given, else the system's resolvers)
 * and says whether one of them is exactly `expected`. A record split into several strings counts
 * as their concatenation (RFC 7208 §3.3). Never throws: every failure is a reason to show.
 */
export async function checkTxtRecord(servers: readonly string[] | undefined, name: string, expected: string): Promise<TxtCheck> {
  const resolver = new dns.Resolver({ timeout: 2000, tries: 2 });
  if (servers) resolver.setServers(servers);
  let records: string[][];
  try {
    records = await resolver.resolveTxt(name);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === dns.NODATA || code === dns.NOTFOUND) return { ok: false, reason: `No TXT record was found at ${name}` };
    return { ok: false, reason: `The DNS lookup of ${name} failed (${code ?? 'unknown error'}); try again later` };
  }
  if (records.some((chunks) => chunks.join('').trim() === expected)) return { ok: true };
  return { ok: false, reason: `The TXT records at ${name} do not include "${expected}"` };
}
