import { SchemaMigration } from './schema-migration.ts';

/**
 * Trusted authorities (spec 1.2 rule 22): the certificates https upstreams are verified against
 * beside the public ones. Public material only, so the PEM is kept in clear; what the console
 * lists (subjects, earliest end, fingerprint, count) is read once at creation and kept beside it.
 */
export class Migration0012 extends SchemaMigration {
  override async up(): Promise<void> {
    this.schema(this.knex.schema.createTable('trusted_authorities', (t) => {
      t.string('id', 64).primary();
      t.string('name', 100).notNullable().unique();
      t.text('pem').notNullable();
      t.jsonb('subjects').notNullable();
      t.bigInteger('not_after').notNullable();
      t.string('fingerprint', 100).notNullable();
      t.integer('count').notNullable();
      t.bigInteger('created_at').notNullable();
    }));
  }
}
