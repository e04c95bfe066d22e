import { describe, expect, it } from 'vitest';
import { asSentence, isAbout } from './field-path.ts';

describe('which field a problem of the API is about', () => {
  it('matches the field and what is inside it, never a field whose name merely starts the same', () => {
    expect(isAbout('email', 'email')).toBe(true);
    expect(isAbout('redirect_uris', 'redirect_uris.0')).toBe(true);
    expect(isAbout('sso.default_role', 'sso.default_role')).toBe(true);
    expect(isAbout('name', 'name_hint')).toBe(false);
    expect(isAbout('sso', 'sso.default_role')).toBe(true);
    expect(isAbout('sso.enabled', 'sso.default_role')).toBe(false);
    expect(isAbout('email', '(body)')).toBe(false);
  });

  it('writes the message as a sentence of its own', () => {
    expect(asSentence('must be an email address')).toBe('Must be an email address');
    expect(asSentence('')).toBe('');
  });
});
