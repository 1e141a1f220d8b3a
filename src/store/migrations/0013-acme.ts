import { SchemaMigration } from './schema-migration.ts';

/**
 * ACME authorities (spec 1.2 rules 19 and 24, 2.5 "ACME authority"): each is a named ACME
 * account. The account key is sealed with the vault master key (context `acme-account/<id>`) and
 * dropped when the directory changes, so a new directory gets a fresh account. The EAB HMAC key
 * is either a `$name` vault reference kept as written, or the literal sealed under
 * `acme-hmac/<id>`. Orders are rows of `certificates` (source `acme`, `authority` = the id).
 */
export class Migration0013 extends SchemaMigration {
  override async up(): Promise<void> {
    this.schema(this.knex.schema.createTable('acme_authorities', (t) => {
      t.string('id', 64).primary();
      t.string('name', 100).notNullable().unique();
      t.string('directory', 2000).notNullable();
      t.text('root_ca').nullable();
      t.string('email', 254).nullable();
      t.string('eab_kid', 200).nullable();
      t.text('eab_hmac').nullable();
      t.boolean('terms_accepted').notNullable();
      /** The challenge tried first: http-01 or tls-alpn-01. */
      t.string('challenge', 20).notNullable();
      t.text('account_key_sealed').nullable();
      t.string('account_url', 2000).nullable();
      t.bigInteger('created_at').notNullable();
      t.bigInteger('updated_at').notNullable();
    }));
  }
}
