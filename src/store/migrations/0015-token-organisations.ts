import { SchemaMigration } from './schema-migration.ts';

/**
 * A schedules token's organisations (ids, or `*`): the organisations its schedules may act for,
 * reading their vault and carrying their membership. A token minted before reads as none.
 */
export class Migration0015 extends SchemaMigration {
  override async up(): Promise<void> {
    this.schema(this.knex.schema.alterTable('tokens', (t) => {
      t.jsonb('organisations').nullable();
    }));
  }
}
