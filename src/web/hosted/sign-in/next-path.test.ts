import { describe, expect, it } from 'vitest';
import { nextPath } from './next-path.ts';

describe('where /login goes after signing in', () => {
  it.each([
    ['/dashboard/users?q=ada', '/dashboard/users?q=ada'],
    ['/dashboard', '/dashboard'],
    [null, '/dashboard'],
    ['https://evil.example/dashboard', '/dashboard'],
    ['//evil.example/dashboard', '/dashboard'],
    ['/dashboardx', '/dashboard'],
    ['/login', '/dashboard'],
    ['javascript:alert(1)', '/dashboard'],
  ])('next=%s → %s', (next, expected) => {
    const search = new URLSearchParams(next === null ? '' : `next=${encodeURIComponent(next)}`);
    expect(nextPath(search)).toBe(expected);
  });
});
