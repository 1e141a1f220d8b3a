import { SchemaMigration } from './schema-migration.ts';

/** Routes, roles, organisations, the vault and the identity signing keys. */
export class Migration0002 extends SchemaMigration {
  override async up(): Promise<void> {
    const knex = this.knex;
    this.schema(knex.schema.createTable('routes', (t) => {
      t.string('id', 100).primary();
      t.text('upstream').notNullable();
      t.jsonb('paths').notNullable();
      t.jsonb('hosts').notNullable();
      t.boolean('strip_prefix').notNullable();
      t.jsonb('rule').nullable();
      t.jsonb('endpoint_rules').notNullable();
      t.string('identity', 20).notNullable();
      t.integer('timeout_ms').notNullable();
      t.jsonb('openapi').nullable();
      t.string('organisation', 100).nullable();
      t.bigInteger('created_at').notNullable();
      t.bigInteger('updated_at').notNullable();
    }));
    this.schema(knex.schema.createTable('roles', (t) => {
      t.string('name', 100).primary();
      t.jsonb('implies').notNullable();
      t.bigInteger('created_at').notNullable();
      t.bigInteger('updated_at').notNullable();
    }));
    this.schema(knex.schema.createTable('organisations', (t) => {
      t.string('id', 100).primary();
      t.string('name', 200).notNullable();
      t.jsonb('hours').nullable();
      t.bigInteger('created_at').notNullable();
      t.bigInteger('updated_at').notNullable();
    }));
    this.schema(knex.schema.createTable('vault_entries', (t) => {
      t.string('id', 320).primary();
      t.string('scope', 110).notNullable().index();
      t.string('name', 200).notNullable();
      t.text('sealed').notNullable();
      t.bigInteger('created_at').notNullable();
      t.bigInteger('updated_at').notNullable();
    }));
    this.schema(knex.schema.createTable('signing_keys', (t) => {
      t.string('kid', 100).primary();
      t.text('sealed').notNullable();
      t.bigInteger('created_at').notNullable();
    }));
  }
}
