import { vi, describe, expect, it } from 'vitest';
import { hashPassword, needsRehash, verifyPassword } from '../src/core/passwords.ts';

// The other in-process tests hash cheaply (test/setup/cheap-hashing.ts); this one checks what the service does.
vi.unmock('argon2');

describe('production password hashing', () => {
  it("stores Argon2id with the service's parameters (m=19 MiB, t=2, p=1), and asks a cheaper hash to be replaced", async () => {
    const hash = await hashPassword('correct horse battery');
    expect(hash.startsWith('$argon2id$v=19$m=19456,t=2,p=1$')).toBe(true);
    expect(await verifyPassword(hash, 'correct horse battery')).toBe('current');
    expect(needsRehash(hash)).toBe(false);
    const cheap = '$argon2id$v=19$m=1024,t=1,p=1$c29tZXNhbHRzb21lc2FsdA$MDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDA';
    expect(needsRehash(cheap)).toBe(true);
  });
});
