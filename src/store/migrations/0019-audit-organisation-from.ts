import { SchemaMigration } from './schema-migration.ts';

/**
 * The organisation a change took its object out of (a route or an account moved from acme to
 * another, or to none): the line belongs to both, so acme's administrator reads that the route
 * left. Null when the object stayed where it was. A column added, not a row rewritten: the trail
 * stays append-only.
 */
export class Migration0019 extends SchemaMigration {
  override async up(): Promise<void> {
    this.schema(this.knex.schema.alterTable('audit_events', (t) => {
      t.string('organisation_from', 100).nullable().index();
    }));
  }
}
