import { onOpen } from '../packages.ts';
import type { Knex } from '@mikro-orm/knex';

/**
 * Migrations are written with knex's schema builder, so one migration serves SQLite and
 * PostgreSQL: `schema()` queues the builder's statements for this migration.
 */
export abstract class SchemaMigration extends onOpen.migrations().Migration {
  protected get knex(): Knex {
    return this.getKnex() as unknown as Knex;
  }

  protected schema(builder: Knex.SchemaBuilder): void {
    for (const q of builder.toSQL()) this.addSql(q.sql);
  }

  /** For the few statements only PostgreSQL has (triggers, NOTIFY). */
  protected isPostgres(): boolean {
    return (this.knex as unknown as { client: { dialect: string } }).client.dialect === 'postgresql';
  }
}
