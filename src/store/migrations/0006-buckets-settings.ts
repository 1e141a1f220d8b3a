import { SchemaMigration } from './schema-migration.ts';
import { bucketOf } from '../../actors/schedules/shards.ts';

/**
 * Schedules get their bucket (which ScheduleActor fires them) and the end of their call's lease
 * as a column (found by an index, not by reading every flight); settings set at run time by root
 * (the history retention first) get a table of their own.
 */
export class Migration0006 extends SchemaMigration {
  override async up(): Promise<void> {
    const knex = this.knex;
    // Run now, not queued: the rows already stored get their bucket below.
    for (const q of knex.schema.alterTable('schedules', (t) => {
      t.integer('bucket').notNullable().defaultTo(0).index();
      t.bigInteger('lease_until').nullable().index();
    }).toSQL()) await this.execute(q.sql);
    const rows = await this.execute('select id, in_flight from schedules') as Array<{ id: string; in_flight: unknown }>;
    for (const { id, in_flight: raw } of rows) {
      const flight = (typeof raw === 'string' ? JSON.parse(raw) : raw) as { leaseUntil?: number } | null;
      await this.execute(knex('schedules').update({ bucket: bucketOf(id), lease_until: flight?.leaseUntil ?? null }).where({ id }).toString());
    }
    this.schema(knex.schema.createTable('settings', (t) => {
      t.string('key', 100).primary();
      t.jsonb('value').notNullable();
      t.bigInteger('updated_at').notNullable();
      t.string('updated_by', 200).nullable();
    }));
  }
}
