import { SchemaMigration } from './schema-migration.ts';

/**
 * On PostgreSQL, every committed configuration change notifies `meerkat_config`, whoever wrote it
 * (a node, the CLI, an operator's SQL). NOTIFY is delivered at commit, so a change that commits
 * after a newer one is announced when it becomes visible. The nodes still poll the `changes`
 * table once a second (and SQLite has only that), so a lost notification costs a second at most.
 */
export class Migration0007 extends SchemaMigration {
  override async up(): Promise<void> {
    if (!this.isPostgres()) return;
    this.addSql(`create or replace function meerkat_changes_notify() returns trigger language plpgsql as $$
begin
  perform pg_notify('meerkat_config', '');
  return null;
end $$`);
    this.addSql('create trigger changes_notify after insert on changes for each statement execute function meerkat_changes_notify()');
  }
}
