import { SchemaMigration } from './schema-migration.ts';

/**
 * A route's endpoint audit rules (spec 1.3 rules 12 and 13): JSON, null when the route has none.
 * Kept with the route on every edition; the licensed edition applies them.
 */
export class Migration0010 extends SchemaMigration {
  override async up(): Promise<void> {
    this.schema(this.knex.schema.alterTable('routes', (t) => {
      t.jsonb('audit').nullable();
    }));
  }
}
