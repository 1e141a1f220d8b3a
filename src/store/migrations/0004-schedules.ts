import { SchemaMigration } from './schema-migration.ts';

/** Schedules and their run history. */
export class Migration0004 extends SchemaMigration {
  override async up(): Promise<void> {
    const knex = this.knex;
    this.schema(knex.schema.createTable('schedules', (t) => {
      t.string('id', 64).primary();
      t.string('name', 200).nullable();
      t.jsonb('roles').notNullable();
      t.string('method', 10).notNullable();
      t.string('route_id', 100).notNullable().index();
      t.text('path').notNullable();
      t.string('every', 100).nullable();
      t.string('cron', 200).nullable();
      t.string('at', 100).nullable();
      t.string('timezone', 100).notNullable();
      t.jsonb('headers').notNullable();
      t.jsonb('body').nullable();
      t.string('content_type', 200).nullable();
      t.jsonb('metadata').notNullable();
      t.string('overlap', 20).notNullable();
      t.integer('catch_up_s').notNullable();
      t.integer('timeout_ms').notNullable();
      t.string('organisation', 100).nullable().index();
      t.string('token_id', 64).nullable().index();
      t.string('token_name', 200).nullable();
      t.boolean('paused').notNullable().defaultTo(false);
      t.boolean('finished').notNullable().defaultTo(false);
      t.bigInteger('next_run_at').nullable().index();
      t.jsonb('in_flight').nullable();
      t.jsonb('last_run').nullable();
      t.integer('deferrals').notNullable().defaultTo(0);
      t.jsonb('run_request').nullable();
      t.integer('version').notNullable().defaultTo(0);
      t.bigInteger('created_at').notNullable();
      t.bigInteger('updated_at').notNullable();
    }));
    this.schema(knex.schema.createTable('schedule_runs', (t) => {
      t.string('id', 64).primary();
      t.string('schedule_id', 64).notNullable().index();
      t.string('run_id', 64).notNullable();
      t.integer('attempt').notNullable();
      t.string('node', 100).nullable();
      t.bigInteger('scheduled_for').nullable();
      t.bigInteger('started_at').nullable();
      t.bigInteger('ended_at').notNullable().index();
      t.string('state', 20).notNullable();
      t.integer('status').nullable();
      t.text('detail').nullable();
      t.string('cause', 64).nullable();
      t.string('of_run', 64).nullable();
      t.jsonb('attempts').nullable();
    }));
  }
}
