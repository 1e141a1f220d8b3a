import { SchemaMigration } from './schema-migration.ts';

/** Written with knex's schema builder so one migration serves SQLite and PostgreSQL. */
export class Migration0001 extends SchemaMigration {
  override async up(): Promise<void> {
    const knex = this.knex;
    this.schema(knex.schema.createTable('accounts', (t) => {
      t.string('id', 64).primary();
      t.string('name', 200).notNullable().unique();
      t.text('password_hash').notNullable();
      t.jsonb('capabilities').notNullable();
      t.jsonb('roles').notNullable();
      t.string('organisation', 64).nullable();
      t.boolean('disabled').notNullable().defaultTo(false);
      t.bigInteger('created_at').notNullable();
      t.bigInteger('updated_at').notNullable();
    }));
    this.schema(knex.schema.createTable('sessions', (t) => {
      t.string('id', 64).primary();
      t.string('account', 64).notNullable().index();
      t.bigInteger('created_at').notNullable();
      t.bigInteger('expires_at').notNullable();
    }));
    this.schema(knex.schema.createTable('tokens', (t) => {
      t.string('id', 64).primary();
      t.string('name', 200).notNullable();
      t.string('kind', 20).notNullable();
      t.string('hash', 64).notNullable().unique();
      t.string('account', 64).nullable();
      t.jsonb('routes').nullable();
      t.jsonb('roles').nullable();
      t.bigInteger('created_at').notNullable();
      t.bigInteger('revoked_at').nullable();
    }));
    this.schema(knex.schema.createTable('changes', (t) => {
      t.increments('id').primary();
      t.string('kind', 100).notNullable();
      t.bigInteger('at').notNullable();
    }));
  }
}
