import type { AuditEvent, AuditListInput } from '../../api/types.ts';
import { oneOf, text, useListParams, type ListParams, type SetListParams } from '../../ui/data/use-list-params.ts';

export const OUTCOMES = ['success', 'failure'] as const satisfies readonly AuditEvent['outcome'][];

const TEXT_KEYS = ['event_type', 'actor_id', 'target_type', 'target_id', 'since', 'until'] as const;

/** The time range is local `datetime-local` text, as typed in the form. */
const AUDIT_LIST = {
  event_type: text(),
  outcome: oneOf(OUTCOMES),
  actor_id: text(),
  target_type: text(),
  target_id: text(),
  since: text(),
  until: text(),
};

/** The filters as typed in the form, and the page. */
export type AuditFilters = ListParams<typeof AUDIT_LIST>;

/** The filters and page live in the address, so back, reload and links keep them. */
export function useAuditFilters(): [AuditFilters, SetListParams<typeof AUDIT_LIST>] {
  return useListParams(AUDIT_LIST);
}

/** A `datetime-local` value (the browser's zone) as the API's ISO timestamp; blank or unreadable is no bound. */
function isoOf(local: string): string | undefined {
  if (!local) return undefined;
  const time = new Date(local);
  return Number.isNaN(time.getTime()) ? undefined : time.toISOString();
}

export function hasFilters(filters: AuditFilters): boolean {
  return Boolean(filters.outcome) || TEXT_KEYS.some((key) => filters[key]);
}

/** The list call's input: only the filters that are set. */
export function auditListInput(filters: AuditFilters, perPage: number): AuditListInput {
  const since = isoOf(filters.since);
  const until = isoOf(filters.until);
  return {
    page: filters.page,
    per_page: perPage,
    ...(filters.event_type ? { event_type: filters.event_type } : {}),
    ...(filters.outcome ? { outcome: filters.outcome } : {}),
    ...(filters.actor_id ? { actor_id: filters.actor_id } : {}),
    ...(filters.target_type ? { target_type: filters.target_type } : {}),
    ...(filters.target_id ? { target_id: filters.target_id } : {}),
    ...(since ? { since } : {}),
    ...(until ? { until } : {}),
  };
}
