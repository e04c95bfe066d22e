import { describe, expect, it } from 'vitest';
import { KnownWorkspaces } from './known-workspaces.ts';

describe('KnownWorkspaces', () => {
  function counting(existing: Set<string>) {
    const asked: string[] = [];
    return { asked, lookup: async (id: string) => (asked.push(id), existing.has(id)) };
  }

  it('asks once for a workspace that exists, again once its minute is up', async () => {
    let now = 1_000;
    const known = new KnownWorkspaces(() => now);
    const db = counting(new Set(['wsp_a']));
    expect(await known.exists('wsp_a', db.lookup)).toBe(true);
    now += 59_000;
    expect(await known.exists('wsp_a', db.lookup)).toBe(true);
    expect(db.asked).toEqual(['wsp_a']);
    now += 1_000;
    expect(await known.exists('wsp_a', db.lookup)).toBe(true);
    expect(db.asked).toEqual(['wsp_a', 'wsp_a']);
  });

  it('never remembers an id that was not found, so a workspace created since is found at once', async () => {
    const existing = new Set<string>();
    const known = new KnownWorkspaces(() => 0);
    const db = counting(existing);
    expect(await known.exists('wsp_new', db.lookup)).toBe(false);
    existing.add('wsp_new');
    expect(await known.exists('wsp_new', db.lookup)).toBe(true);
    expect(db.asked).toEqual(['wsp_new', 'wsp_new']);
  });

  it('holds at most its bound, forgetting the oldest first', async () => {
    const known = new KnownWorkspaces(() => 0, 60_000, 2);
    const db = counting(new Set(['wsp_1', 'wsp_2', 'wsp_3']));
    for (const id of ['wsp_1', 'wsp_2', 'wsp_3', 'wsp_3', 'wsp_2', 'wsp_1']) await known.exists(id, db.lookup);
    expect(db.asked).toEqual(['wsp_1', 'wsp_2', 'wsp_3', 'wsp_1']);
  });
});
