import { SchemaMigration } from './schema-migration.ts';

/**
 * Transport security (spec 1.2, 2.5): certificates held once, their placements on planes, and
 * the console traffic window pooled over nodes. The TLS settings (plain ports, redirect, doors)
 * are rows of the `settings` table.
 *
 * A certificate row keeps the certificate in clear and the private key sealed with the vault
 * master key (never in clear). A file-system certificate keeps its two paths and the last
 * certificate read, no key; a pending signing request keeps its request and its sealed key.
 */
export class Migration0011 extends SchemaMigration {
  override async up(): Promise<void> {
    const knex = this.knex;
    this.schema(knex.schema.createTable('certificates', (t) => {
      t.string('id', 64).primary();
      t.string('name', 200).notNullable();
      t.string('source', 20).notNullable();
      t.jsonb('names').notNullable();
      t.string('issuer', 400).nullable();
      t.bigInteger('not_before').nullable();
      t.bigInteger('not_after').nullable();
      t.string('fingerprint', 120).nullable();
      t.text('cert_pem').nullable();
      t.text('key_sealed').nullable();
      t.text('csr_pem').nullable();
      t.string('cert_path', 1000).nullable();
      t.string('key_path', 1000).nullable();
      t.string('authority', 200).nullable();
      t.string('status', 20).nullable();
      t.text('detail').nullable();
      t.bigInteger('created_at').notNullable();
      t.bigInteger('updated_at').notNullable();
    }));
    this.schema(knex.schema.createTable('certificate_placements', (t) => {
      t.string('certificate_id', 64).notNullable().references('id').inTable('certificates').onDelete('CASCADE');
      t.string('plane', 20).notNullable();
      t.bigInteger('placed_at').notNullable();
      t.primary(['certificate_id', 'plane']);
    }));
    this.schema(knex.schema.createTable('console_traffic', (t) => {
      t.string('node', 100).notNullable();
      t.string('door', 10).notNullable();
      t.string('peer', 100).notNullable();
      t.bigInteger('last_seen').notNullable();
      t.primary(['node', 'door']);
    }));
  }
}
