import { Migration } from '@mikro-orm/migrations';

/**
 * Deleting a role no longer deletes the invitations that carry it: the service revokes the pending
 * ones first (each audited), and the others (accepted, revoked, expired) keep their row, without the
 * role. A pending invitation always names a role, so accepting one always has a role to give.
 */
export class Migration20261128010000_invitation_role_set_null extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table invitations alter column role_id drop not null;
      alter table invitations drop constraint invitations_role_id_fkey;
      alter table invitations add constraint invitations_role_id_fkey
        foreign key (role_id) references roles(id) on delete set null deferrable initially deferred;
      alter table invitations add constraint invitations_pending_has_role check (status <> 'pending' or role_id is not null);
    `);
  }

  override async down(): Promise<void> {
    this.addSql(`
      alter table invitations drop constraint invitations_pending_has_role;
      delete from invitations where role_id is null;
      alter table invitations drop constraint invitations_role_id_fkey;
      alter table invitations add constraint invitations_role_id_fkey
        foreign key (role_id) references roles(id) on delete cascade deferrable initially deferred;
      alter table invitations alter column role_id set not null;
    `);
  }
}
