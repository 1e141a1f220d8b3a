import { SchemaMigration } from './schema-migration.ts';

/**
 * Schedules tokens minted before their organisations existed (0015) read as acting for none, so
 * the schedules they had written for an organisation were refused at every turn from the upgrade
 * on, and the writing token could not even write them again. Each such token is given the
 * organisations its own schedules act for, and nothing more: what it did before the upgrade it
 * still does, and it reaches no other organisation. Tokens minted since then hold no such schedule
 * (the write is refused), so they are left as they are.
 */
export class Migration0021 extends SchemaMigration {
  override async up(): Promise<void> {
    const knex = this.knex;
    const rows = await this.execute(
      "select s.token_id as token, s.organisation as organisation from schedules s join tokens t on t.id = s.token_id "
      + "where t.kind = 'schedules' and t.organisations is null and s.organisation is not null",
    ) as Array<{ token: string; organisation: string }>;
    const given = new Map<string, Set<string>>();
    for (const { token, organisation } of rows) {
      let set = given.get(token);
      if (set === undefined) given.set(token, (set = new Set()));
      set.add(organisation);
    }
    for (const [token, organisations] of given) {
      const value = JSON.stringify([...organisations].sort());
      await this.execute(knex('tokens').update({ organisations: this.isPostgres() ? knex.raw('cast(? as jsonb)', [value]) : value }).where({ id: token }).toString());
    }
  }
}
