import { SchemaMigration } from './schema-migration.ts';

/**
 * Each node's traffic metrics as the others read them (spec 1.5 rule 6): one row per node, its
 * ring's latest summary (the hour's counts per 5-second interval, the minute's merged
 * histograms), written by the node's MetricsRing every interval. Rows of nodes silent for an
 * hour are removed. Metrics are never history: a restart starts a new hour.
 */
export class Migration0014 extends SchemaMigration {
  override async up(): Promise<void> {
    this.schema(this.knex.schema.createTable('metrics_nodes', (t) => {
      t.string('node', 100).primary();
      t.bigInteger('updated_at').notNullable().index();
      t.text('snapshot').notNullable();
    }));
  }
}
