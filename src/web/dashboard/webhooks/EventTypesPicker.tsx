import { useQuery } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import { readAllPages } from '../../ui/data/all-pages.ts';
import { QueryState } from '../../ui/data/QueryState.tsx';
import { Checkbox } from '../../ui/forms/Checkbox.tsx';
import { FieldError, useFieldProblem } from '../../ui/forms/field-problems.tsx';

/** The subscribable events from `webhooks.eventTypes`, as checkboxes; none ticked means every event. */
export function EventTypesPicker({ value, onChange }: { value: string[]; onChange(next: string[]): void }) {
  const types = useQuery({
    queryKey: ['webhooks.eventTypes', 'all'],
    queryFn: () => readAllPages((page) => api.webhooks.eventTypes.query(page)),
    staleTime: Infinity,
  });
  const problem = useFieldProblem('event_types');
  const toggle = (type: string, on: boolean) => onChange(on ? [...value, type] : value.filter((t) => t !== type));
  return (
    <fieldset className="event-types" aria-describedby={problem ? 'event-types-error' : undefined}>
      <legend>Events</legend>
      <p className="hint">Tick none to receive every event.</p>
      <FieldError id="event-types-error" problem={problem} />
      <QueryState query={types} loading="Loading event types…">
        {(all) =>
          all.data.map((t) => (
            <Checkbox
              key={t.type}
              label={t.type}
              hint={t.description}
              checked={value.includes(t.type)}
              onChange={(on) => toggle(t.type, on)}
            />
          ))
        }
      </QueryState>
    </fieldset>
  );
}
