import { useState, type FormEvent } from 'react';
import { Button } from '../../ui/actions/Button.tsx';
import { SelectField } from '../../ui/forms/SelectField.tsx';
import { TextField } from '../../ui/forms/TextField.tsx';
import { USER_STATUSES, type UserFilters } from './use-user-filters.ts';

const STATUS_OPTIONS = [
  { value: '', label: 'Any status' },
  ...USER_STATUSES.map((s) => ({ value: s, label: s[0]?.toUpperCase() + s.slice(1) })),
] as const;

/** Search by email or name, filter by status. */
export function UserFiltersForm({ filters, onChange }: { filters: UserFilters; onChange(next: Partial<UserFilters>): void }) {
  const [q, setQ] = useState(filters.q);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onChange({ q: q.trim() });
  };
  return (
    <form className="filters" role="search" aria-label="Search users" onSubmit={submit}>
      <TextField label="Search" type="search" value={q} onChange={setQ} placeholder="Email or name" maxLength={200} />
      <SelectField label="Status" value={filters.status} options={STATUS_OPTIONS} onChange={(status) => onChange({ status })} />
      <Button type="submit">Search</Button>
    </form>
  );
}
