/** Escapes text for HTML element content and quoted attribute values of the server-rendered pages. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
