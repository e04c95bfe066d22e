import { Migration } from '@mikro-orm/migrations';

/**
 * The vault: each value encrypted under its own data key (AES-256-GCM), the data key wrapped under
 * the master key named by `key_id`. Names are unique per workspace, whatever their case.
 */
export class Migration20261126072000_vault extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table vault_objects (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade deferrable initially deferred,
        name text not null,
        description text null,
        ciphertext text not null,
        wrapped_key text not null,
        key_id text not null,
        created_by_type text not null,
        created_by_id text null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );
      create unique index vault_objects_workspace_id_name_unique on vault_objects (workspace_id, lower(name));
      create index vault_objects_workspace_id_id_index on vault_objects (workspace_id, id);
      create index vault_objects_key_id_index on vault_objects (key_id);
    `);
  }
}
