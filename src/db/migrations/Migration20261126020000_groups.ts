import { Migration } from '@mikro-orm/migrations';

/** Groups of users. Names are unique per workspace, whatever their case. */
export class Migration20261126020000_groups extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table groups (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade deferrable initially deferred,
        name text not null,
        description text null,
        created_at timestamptz not null
      );
      create unique index groups_workspace_id_name_unique on groups (workspace_id, lower(name));

      create table group_members (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade deferrable initially deferred,
        group_id text not null references groups(id) on delete cascade deferrable initially deferred,
        user_id text not null references users(id) on delete cascade deferrable initially deferred,
        created_at timestamptz not null,
        constraint group_members_group_id_user_id_unique unique (group_id, user_id)
      );
      create index group_members_user_id_index on group_members (user_id);
    `);
  }
}
