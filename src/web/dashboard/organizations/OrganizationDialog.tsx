import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import type { Organization } from '../../api/types.ts';
import { Button } from '../../ui/actions/Button.tsx';
import { Checkbox } from '../../ui/forms/Checkbox.tsx';
import { Form } from '../../ui/forms/Form.tsx';
import { TextField } from '../../ui/forms/TextField.tsx';
import { Dialog } from '../../ui/overlay/Dialog.tsx';

function splitDomains(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((d) => d.trim())
    .filter(Boolean);
}

/** Create an organization, or edit one: name, email domains and SSO settings. */
export function OrganizationDialog({ organization }: { organization?: Organization }) {
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const [name, setName] = useState(organization?.name ?? '');
  const [domains, setDomains] = useState(organization?.domains.join(', ') ?? '');
  const [enabled, setEnabled] = useState(organization?.sso.enabled ?? true);
  const [jit, setJit] = useState(organization?.sso.jit_provisioning ?? false);
  const [defaultRole, setDefaultRole] = useState(organization?.sso.default_role ?? 'member');
  const save = useMutation({
    mutationFn: () => {
      const body = {
        name: name.trim(),
        domains: splitDomains(domains),
        sso: { enabled, jit_provisioning: jit, default_role: defaultRole.trim() },
      };
      return organization ? api.organizations.update.mutate({ id: organization.id, ...body }) : api.organizations.create.mutate(body);
    },
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ['organizations.list'] });
      setOpen(false);
    },
  });
  /** Every opening starts from the organization as it is now (blank for a new one), not from edits left unsaved. */
  const start = () => {
    setName(organization?.name ?? '');
    setDomains(organization?.domains.join(', ') ?? '');
    setEnabled(organization?.sso.enabled ?? true);
    setJit(organization?.sso.jit_provisioning ?? false);
    setDefaultRole(organization?.sso.default_role ?? 'member');
    save.reset();
    setOpen(true);
  };
  const title = organization ? `Edit ${organization.name}` : 'Create an organization';
  return (
    <>
      {organization ? (
        <Button className="button-small" aria-label={`Edit ${organization.name}`} onClick={start}>
          Edit
        </Button>
      ) : (
        <Button variant="primary" onClick={start}>
          Create organization
        </Button>
      )}
      <Dialog title={title} open={open} onClose={() => setOpen(false)}>
        <Form
          label={title}
          onSubmit={() => save.mutate()}
          submitLabel={organization ? 'Save' : 'Create organization'}
          busy={save.isPending}
          error={save.error}
        >
          <TextField label="Name" name="name" value={name} onChange={setName} required maxLength={100} />
          <TextField
            label="Email domains"
            name="domains"
            value={domains}
            onChange={setDomains}
            hint="Separated by commas, for example acme.com, acme.co.uk. A domain belongs to one organization only."
          />
          <Checkbox label="Single sign-on enabled" name="sso.enabled" checked={enabled} onChange={setEnabled} />
          <Checkbox
            label="Create accounts on first sign-in (just-in-time provisioning)"
            name="sso.jit_provisioning"
            checked={jit}
            onChange={setJit}
            hint="Unknown people the company’s identity provider vouches for get an account."
          />
          <TextField
            label="Role of new accounts"
            name="sso.default_role"
            value={defaultRole}
            onChange={setDefaultRole}
            required
            maxLength={50}
            hint="A role key, such as member."
          />
        </Form>
      </Dialog>
    </>
  );
}
