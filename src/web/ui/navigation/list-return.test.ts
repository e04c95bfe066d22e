import { describe, expect, it } from 'vitest';
import { returnAddress } from './list-return.ts';

describe('the way back from an item to its list', () => {
  it('is the address the list had when it opened the item, page and filters included', () => {
    expect(returnAddress({ list: '/dashboard/webhooks?page=3' }, '/dashboard/webhooks')).toBe('/dashboard/webhooks?page=3');
    expect(returnAddress({ list: '/dashboard/users?q=ada&status=locked&page=2' }, '/dashboard/users')).toBe(
      '/dashboard/users?q=ada&status=locked&page=2',
    );
    expect(returnAddress({ list: '/dashboard/actions' }, '/dashboard/actions')).toBe('/dashboard/actions');
  });

  it("is the list's first page when the item was not opened from that list", () => {
    expect(returnAddress(null, '/dashboard/webhooks')).toBe('/dashboard/webhooks');
    expect(returnAddress(undefined, '/dashboard/webhooks')).toBe('/dashboard/webhooks');
    expect(returnAddress({ list: 3 }, '/dashboard/webhooks')).toBe('/dashboard/webhooks');
    expect(returnAddress({ other: '/dashboard/webhooks?page=3' }, '/dashboard/webhooks')).toBe('/dashboard/webhooks');
    // Another list's address, or one that only starts like this list's path, is not taken.
    expect(returnAddress({ list: '/dashboard/groups?page=2' }, '/dashboard/webhooks')).toBe('/dashboard/webhooks');
    expect(returnAddress({ list: '/dashboard/webhooks/wh_1?page=2' }, '/dashboard/webhooks')).toBe('/dashboard/webhooks');
    expect(returnAddress({ list: '//evil.example/dashboard/webhooks' }, '/dashboard/webhooks')).toBe('/dashboard/webhooks');
  });
});
