import { Checkbox } from '../../ui/forms/Checkbox.tsx';
import { TextField } from '../../ui/forms/TextField.tsx';
import { EventTypesPicker } from './EventTypesPicker.tsx';

export interface EndpointDraft {
  url: string;
  description: string;
  event_types: string[];
  enabled: boolean;
}

export const BLANK_ENDPOINT: EndpointDraft = { url: '', description: '', event_types: [], enabled: true };

/** The fields an endpoint is made of, shared by the create and edit dialogs. */
export function EndpointFields({ draft, onChange }: { draft: EndpointDraft; onChange(next: EndpointDraft): void }) {
  return (
    <>
      <TextField
        label="URL"
        name="url"
        type="url"
        value={draft.url}
        onChange={(url) => onChange({ ...draft, url })}
        required
        maxLength={2000}
        hint="Where events are POSTed, signed with the endpoint's secret (Standard Webhooks)."
      />
      <TextField
        label="Description"
        name="description"
        value={draft.description}
        onChange={(description) => onChange({ ...draft, description })}
        maxLength={500}
      />
      <EventTypesPicker value={draft.event_types} onChange={(event_types) => onChange({ ...draft, event_types })} />
      <Checkbox
        label="Enabled"
        name="enabled"
        checked={draft.enabled}
        onChange={(enabled) => onChange({ ...draft, enabled })}
        hint="A disabled endpoint receives nothing until enabled again."
      />
    </>
  );
}
