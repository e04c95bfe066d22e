import { describe, expect, it } from 'vitest';
import { asSentence, isAbout, problemText } from './field-path.ts';

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

  it('says which entry of a list a problem is about', () => {
    expect(problemText('redirect_uris', 'redirect_uris.1', 'must use https')).toBe('Entry 2: must use https');
    expect(problemText('domains', 'domains.0.name', 'is taken')).toBe('Entry 1: is taken');
    expect(problemText('email', 'email', 'must be an email address')).toBe('Must be an email address');
    expect(problemText('sso', 'sso.default_role', 'must be a role key')).toBe('Must be a role key');
  });
});
