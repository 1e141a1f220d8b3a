import { SchemaMigration } from './schema-migration.ts';

/** The message both databases give when something other than the sweep touches an event. */
export const APPEND_ONLY = 'audit events are append-only';

/**
 * The audit trail (spec 1.3): one table for its three parts, read newest first by id. It is
 * append-only in the database itself (spec 1.3 rule 1), so neither a bug in the gateway nor an
 * operator's hurried SQL can rewrite history: a trigger refuses every UPDATE, and every DELETE
 * but the retention sweep's.
 *
 * PostgreSQL: the sweep runs `set_config('meerkat.audit_sweep', 'on', true)` (SET LOCAL) in its
 * transaction; the setting ends with that transaction, committed or not, so it never leaks to
 * the next user of the pooled connection.
 *
 * SQLite has no session variables. The sweep inserts a row into `audit_sweep_guard` inside its
 * own write transaction and deletes it again before committing. SQLite has one writer at a time
 * and other connections never see uncommitted rows, so the row is visible only to the sweep's
 * own statements; if the sweep fails half-way the rollback takes the row away with the
 * deletions, so no guard row can outlive the transaction that set it.
 */
export class Migration0009 extends SchemaMigration {
  override async up(): Promise<void> {
    const knex = this.knex;
    this.schema(knex.schema.createTable('audit_events', (t) => {
      t.string('id', 64).primary();
      t.bigInteger('at').notNullable().index();
      t.string('part', 20).notNullable();
      t.string('action', 100).notNullable();
      t.string('actor_account', 200).nullable();
      t.string('actor_token', 200).nullable();
      t.string('target_kind', 50).notNullable().index();
      t.string('target_id', 200).nullable();
      t.string('target_name', 400).nullable();
      t.string('organisation', 100).nullable().index();
      t.jsonb('changes').nullable();
      t.text('detail').nullable();
      t.string('address', 100).nullable();
      t.string('node', 100).notNullable();
      t.string('trace_id', 64).nullable();
      t.jsonb('attributes').nullable();
      t.index(['part', 'id']);
    }));
    if (this.isPostgres()) {
      this.addSql(`create or replace function meerkat_audit_append_only() returns trigger language plpgsql as $$
begin
  if tg_op = 'DELETE' and coalesce(current_setting('meerkat.audit_sweep', true), '') = 'on' then
    return old;
  end if;
  raise exception '${APPEND_ONLY}' using errcode = 'insufficient_privilege';
end $$`);
      this.addSql('create trigger audit_events_append_only before update or delete on audit_events for each row execute function meerkat_audit_append_only()');
      // TRUNCATE fires no row trigger; it would empty the trail in one statement.
      this.addSql('create trigger audit_events_no_truncate before truncate on audit_events for each statement execute function meerkat_audit_append_only()');
      return;
    }
    this.schema(knex.schema.createTable('audit_sweep_guard', (t) => {
      t.integer('sweeping').primary();
    }));
    this.addSql(`create trigger audit_events_no_update before update on audit_events
begin select raise(abort, '${APPEND_ONLY}'); end`);
    this.addSql(`create trigger audit_events_no_delete before delete on audit_events
when not exists (select 1 from audit_sweep_guard)
begin select raise(abort, '${APPEND_ONLY}'); end`);
  }
}
