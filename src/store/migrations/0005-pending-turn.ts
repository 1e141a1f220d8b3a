import { SchemaMigration } from './schema-migration.ts';

/** A turn owed again: the next attempt of a retried call, or a deferred turn (424, retryIn). */
export class Migration0005 extends SchemaMigration {
  override async up(): Promise<void> {
    this.schema(this.knex.schema.alterTable('schedules', (t) => {
      t.jsonb('pending_turn').nullable();
    }));
  }
}
