import { Migration } from '@mikro-orm/migrations';

/**
 * When a signing key starts signing, and when it was revoked. Until now a key signed once published
 * 5 minutes, which existing keys keep; a key made to replace a revoked one signs at once.
 */
export class Migration20261203000000_signing_key_revocation extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table signing_keys add column activated_at timestamptz, add column revoked_at timestamptz;');
    this.addSql(`update signing_keys set activated_at = created_at + interval '5 minutes';`);
    this.addSql('alter table signing_keys alter column activated_at set not null;');
  }

  override async down(): Promise<void> {
    this.addSql('alter table signing_keys drop column activated_at, drop column revoked_at;');
  }
}
