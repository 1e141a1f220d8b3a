import { SchemaMigration } from './schema-migration.ts';

/**
 * Why a schedule stopped for good, when it did: `token-revoked` once the token that wrote it is
 * revoked (its perimeter bounds every call). A stopped schedule is kept for reading and deletion.
 */
export class Migration0008 extends SchemaMigration {
  override async up(): Promise<void> {
    this.schema(this.knex.schema.alterTable('schedules', (t) => {
      t.string('stopped').nullable();
    }));
  }
}
