import { SchemaMigration } from './schema-migration.ts';

/**
 * What configuration each node serves (PostgreSQL clusters): the newest change its snapshot holds,
 * and when it last said so, by the database's clock. A configuration write waits until every node
 * heard from lately holds it, so a revocation answered is a revocation on every node.
 */
export class Migration0017 extends SchemaMigration {
  override async up(): Promise<void> {
    this.schema(this.knex.schema.createTable('node_marks', (t) => {
      t.string('node', 100).primary();
      t.bigInteger('change_id').notNullable();
      t.bigInteger('at').notNullable();
    }));
  }
}
