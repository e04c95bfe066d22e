/**
 * The workspace people sign in to. Public calls name it (X-Tenant-ID), and it is not a secret, so the
 * last one used is remembered in localStorage to prefill the sign-in and reset forms.
 */
const KEY = 'identity.workspace_id';

export function rememberedWorkspace(): string {
  return window.localStorage.getItem(KEY) ?? '';
}

export function rememberWorkspace(workspaceId: string): void {
  window.localStorage.setItem(KEY, workspaceId);
}

/** `?workspace=` of the current URL, else the remembered one. */
export function initialWorkspace(search: URLSearchParams): string {
  return search.get('workspace')?.trim() || rememberedWorkspace();
}
