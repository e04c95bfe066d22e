/**
 * What a list hands the screen it opens (in the router's location state): its own address, path and
 * query, so that screen can go back to the list as it was (its page and filters).
 */
export interface FromList {
  list: string;
}

/**
 * Where a screen opened from the list at `listPath` goes back to: the address the list had when it
 * opened the screen, or the list's first page when the screen was opened another way (a typed or
 * bookmarked address, a reload of a tab that never saw the list). Only an address of that list is
 * taken, so state left by another screen cannot send the back link elsewhere.
 */
export function returnAddress(state: unknown, listPath: string): string {
  const list = typeof state === 'object' && state !== null && 'list' in state && typeof state.list === 'string' ? state.list : null;
  return list !== null && (list === listPath || list.startsWith(`${listPath}?`)) ? list : listPath;
}
