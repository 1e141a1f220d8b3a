import { SchemaMigration } from './schema-migration.ts';

/**
 * What each node serves (PostgreSQL clusters): for its configuration and for its certificates, the
 * newest change its snapshot holds, and when it last said so, by the database's clock. A write
 * waits until every node heard from lately holds it, so a revocation answered is a revocation on
 * every node.
 */
export class Migration0017 extends SchemaMigration {
  override async up(): Promise<void> {
    this.schema(this.knex.schema.createTable('node_marks', (t) => {
      t.string('node', 100).notNullable();
      /** config | certs: the actor whose snapshot it is. */
      t.string('what', 20).notNullable();
      t.bigInteger('change_id').notNullable();
      t.bigInteger('at').notNullable();
      t.primary(['node', 'what']);
    }));
  }
}
