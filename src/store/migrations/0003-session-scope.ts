import { Migration } from '@mikro-orm/migrations';
import type { Knex } from '@mikro-orm/knex';

/** Console and application sessions live in one table; the scope keeps one from opening the other. */
export class Migration0003 extends Migration {
  override async up(): Promise<void> {
    const knex = this.getKnex();
    const add = (builder: Knex.SchemaBuilder) => {
      for (const q of builder.toSQL()) this.addSql(q.sql);
    };
    add(knex.schema.alterTable('sessions', (t) => {
      t.string('scope', 20).notNullable().defaultTo('console');
    }));
  }
}
