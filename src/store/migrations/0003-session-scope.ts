import { SchemaMigration } from './schema-migration.ts';

/** Console and application sessions live in one table; the scope keeps one from opening the other. */
export class Migration0003 extends SchemaMigration {
  override async up(): Promise<void> {
    const knex = this.knex;
    this.schema(knex.schema.alterTable('sessions', (t) => {
      t.string('scope', 20).notNullable().defaultTo('console');
    }));
  }
}
