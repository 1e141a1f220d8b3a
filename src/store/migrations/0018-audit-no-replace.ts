import { SchemaMigration } from './schema-migration.ts';
import { APPEND_ONLY } from './0009-audit.ts';

/**
 * SQLite: `INSERT OR REPLACE` (and `REPLACE INTO`) of an existing event's id removed the old row
 * without firing the DELETE trigger (SQLite fires none for a replace while recursive triggers are
 * off, and any connection may have them off), so one statement could rewrite history past the
 * append-only triggers of 0009. An insert whose id is already stored is refused before it happens.
 * PostgreSQL needs nothing: its upsert is an UPDATE, which 0009's trigger refuses.
 */
export class Migration0018 extends SchemaMigration {
  override async up(): Promise<void> {
    if (this.isPostgres()) return;
    this.addSql(`create trigger audit_events_no_replace before insert on audit_events
when exists (select 1 from audit_events where id = new.id)
begin select raise(abort, '${APPEND_ONLY}'); end`);
  }
}
