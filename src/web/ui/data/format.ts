const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** An API timestamp for people; null is "never". */
export function formatDateTime(iso: string | null | undefined, never = 'Never'): string {
  return iso ? dateTime.format(new Date(iso)) : never;
}
