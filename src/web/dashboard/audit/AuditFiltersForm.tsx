import { useState, type FormEvent } from 'react';
import { Button } from '../../ui/actions/Button.tsx';
import { SelectField } from '../../ui/forms/SelectField.tsx';
import { TextField } from '../../ui/forms/TextField.tsx';
import { OUTCOMES, type AuditFilters } from './use-audit-filters.ts';

const OUTCOME_OPTIONS = [
  { value: '', label: 'Any outcome' },
  ...OUTCOMES.map((o) => ({ value: o, label: o === 'success' ? 'Success' : 'Failure' })),
] as const;

type Draft = Omit<AuditFilters, 'page'>;

/** Event type, outcome, actor, target and time range; applied together with the Filter button. */
export function AuditFiltersForm({ filters, onChange }: { filters: AuditFilters; onChange(next: Partial<AuditFilters>): void }) {
  const [draft, setDraft] = useState<Draft>(filters);
  const set = (key: keyof Draft) => (value: string) => setDraft((d) => ({ ...d, [key]: value }));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onChange({ ...draft, event_type: draft.event_type.trim(), actor_id: draft.actor_id.trim(), target_id: draft.target_id.trim() });
  };
  const clear = () => {
    const blank: Draft = { event_type: '', outcome: '', actor_id: '', target_type: '', target_id: '', since: '', until: '' };
    setDraft(blank);
    onChange(blank);
  };
  return (
    <form className="filters" role="search" aria-label="Filter audit events" onSubmit={submit}>
      <TextField label="Event type" value={draft.event_type} onChange={set('event_type')} placeholder="user.login" maxLength={100} />
      <SelectField
        label="Outcome"
        value={draft.outcome}
        options={OUTCOME_OPTIONS}
        onChange={(outcome) => setDraft((d) => ({ ...d, outcome }))}
      />
      <TextField label="Actor ID" value={draft.actor_id} onChange={set('actor_id')} maxLength={100} />
      <TextField label="Target type" value={draft.target_type} onChange={set('target_type')} placeholder="user" maxLength={100} />
      <TextField label="Target ID" value={draft.target_id} onChange={set('target_id')} maxLength={100} />
      <TextField label="From" type="datetime-local" value={draft.since} onChange={set('since')} />
      <TextField label="Until" type="datetime-local" value={draft.until} onChange={set('until')} />
      <Button type="submit">Filter</Button>
      <Button variant="link" onClick={clear}>
        Clear filters
      </Button>
    </form>
  );
}
