import { SchemaMigration } from './schema-migration.ts';

/**
 * Sign-in attempts per name, shared by every node (spec 1.3 rule 8): a failure on one node counts
 * on all, and an attempt in flight holds its place until it ends. Rows past the window go at the
 * next attempt of any name.
 */
export class Migration0016 extends SchemaMigration {
  override async up(): Promise<void> {
    this.schema(this.knex.schema.createTable('signin_attempts', (t) => {
      t.string('id', 40).primary();
      t.string('name_key', 200).notNullable().index();
      /** pending | failed | locked */
      t.string('state', 10).notNullable();
      t.bigInteger('at').notNullable().index();
      t.bigInteger('until').nullable();
    }));
  }
}
