import { Migration } from '@mikro-orm/migrations';

/**
 * Access governance: requests for an entitlement (a role or a group) and access reviews with one item
 * per grant that existed when the review started. Users are referenced without a foreign key, with
 * their email copied in: the history of who asked for and who held what outlives the account.
 */
export class Migration20261126073000_governance extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table access_requests (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade deferrable initially deferred,
        requester_id text not null,
        requester_email text not null,
        entitlement_type text not null check (entitlement_type in ('role', 'group')),
        entitlement_id text not null,
        entitlement_name text not null,
        justification text not null,
        status text not null check (status in ('pending', 'approved', 'denied')),
        decided_by_type text null,
        decided_by_id text null,
        decided_at timestamptz null,
        decision_reason text null,
        grant_expires_at timestamptz null,
        created_at timestamptz not null
      );
      create unique index access_requests_one_pending on access_requests (workspace_id, requester_id, entitlement_id) where status = 'pending';
      create index access_requests_recent_index on access_requests (workspace_id, created_at desc, id desc);
      create index access_requests_status_index on access_requests (workspace_id, status, created_at desc, id desc);

      create table access_reviews (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade deferrable initially deferred,
        name text not null,
        scope_type text not null check (scope_type in ('role', 'group', 'everyone')),
        scope_id text null,
        scope_name text null,
        status text not null check (status in ('in_progress', 'completed')),
        item_count int not null,
        decided_count int not null,
        kept_count int not null,
        revoked_count int not null,
        created_by_type text not null,
        created_by_id text null,
        created_at timestamptz not null,
        due_at timestamptz null,
        completed_at timestamptz null,
        check (decided_count <= item_count and kept_count + revoked_count = decided_count)
      );
      create index access_reviews_recent_index on access_reviews (workspace_id, created_at desc, id desc);

      create table access_review_items (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade deferrable initially deferred,
        review_id text not null references access_reviews(id) on delete cascade deferrable initially deferred,
        user_id text not null,
        user_email text not null,
        entitlement_type text not null check (entitlement_type in ('role', 'group')),
        entitlement_id text not null,
        entitlement_name text not null,
        grant_expires_at timestamptz null,
        decision text null check (decision in ('keep', 'revoke')),
        decided_by_type text null,
        decided_by_id text null,
        decided_at timestamptz null,
        comment text null,
        created_at timestamptz not null
      );
      create index access_review_items_review_index on access_review_items (review_id, entitlement_name, user_email, id);
    `);
  }
}
