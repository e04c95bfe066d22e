import { useSearchParams } from 'react-router';
import type { AuditEvent, AuditListInput } from '../../api/types.ts';

export const OUTCOMES = ['success', 'failure'] as const satisfies readonly AuditEvent['outcome'][];

/** The filters as typed in the form; the time range is local `datetime-local` text. */
export interface AuditFilters {
  event_type: string;
  outcome: AuditEvent['outcome'] | '';
  actor_id: string;
  target_type: string;
  target_id: string;
  since: string;
  until: string;
  page: number;
}

const TEXT_KEYS = ['event_type', 'actor_id', 'target_type', 'target_id', 'since', 'until'] as const;

/** The filters and page live in the address, so back, reload and links keep them. */
export function useAuditFilters(): [AuditFilters, (next: Partial<AuditFilters>, options?: { replace?: boolean }) => void] {
  const [search, setSearch] = useSearchParams();
  const outcome = search.get('outcome');
  const filters: AuditFilters = {
    event_type: search.get('event_type') ?? '',
    outcome: OUTCOMES.find((o) => o === outcome) ?? '',
    actor_id: search.get('actor_id') ?? '',
    target_type: search.get('target_type') ?? '',
    target_id: search.get('target_id') ?? '',
    since: search.get('since') ?? '',
    until: search.get('until') ?? '',
    page: Math.max(1, Number(search.get('page')) || 1),
  };
  const update = (next: Partial<AuditFilters>, options?: { replace?: boolean }) => {
    const merged = { ...filters, page: 1, ...next };
    const params = new URLSearchParams();
    for (const key of TEXT_KEYS) if (merged[key]) params.set(key, merged[key]);
    if (merged.outcome) params.set('outcome', merged.outcome);
    if (merged.page > 1) params.set('page', String(merged.page));
    setSearch(params, { replace: options?.replace ?? false });
  };
  return [filters, update];
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
