import { SchemaMigration } from './schema-migration.ts';

/**
 * A route's endpoints as every node of a cluster counted them (spec 1.5 rules 5 and 6), so that
 * the endpoints read on any node sum the cluster's:
 * - `metrics_endpoints`: per node and route that answered in the last minute, the minute's
 *   endpoints (counts and merged histograms, JSON), replaced every interval;
 * - `metrics_history`: one row per endpoint and clock minute in which it answered, written by the
 *   node that answered when the minute closes. Rows older than seventy minutes are removed; a node
 *   restarted under its name removes its own (a restart starts anew).
 */
export class Migration0020 extends SchemaMigration {
  override async up(): Promise<void> {
    this.schema(this.knex.schema.createTable('metrics_endpoints', (t) => {
      t.string('id', 210).primary();
      t.string('node', 100).notNullable();
      t.string('route', 100).notNullable().index();
      t.bigInteger('updated_at').notNullable();
      t.text('endpoints').notNullable();
    }));
    this.schema(this.knex.schema.createTable('metrics_history', (t) => {
      t.increments('id').primary();
      t.string('node', 100).notNullable().index();
      t.string('route', 100).notNullable();
      t.text('template').notNullable();
      t.boolean('deduced').notNullable();
      t.bigInteger('t').notNullable().index();
      t.integer('requests').notNullable();
      t.integer('failed').notNullable();
      t.double('p95').nullable();
      t.index(['route', 't']);
    }));
  }
}
