import { SchemaMigration } from './schema-migration.ts';

/**
 * The endpoints' history points of every node (spec 1.5 rules 5 and 6): one row per endpoint and
 * clock minute in which it answered, written once by the node that answered when the minute
 * closes, so that a route's endpoints read on any node sum the cluster's. Rows older than seventy
 * minutes are removed; a node restarted under its name removes its own (a restart starts anew).
 */
export class Migration0020 extends SchemaMigration {
  override async up(): Promise<void> {
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
