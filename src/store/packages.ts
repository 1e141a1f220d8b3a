/** MikroORM's packages, loaded with `require` (src/packages.ts says why). */
import { loadPackage } from '../packages.ts';

export const orm = loadPackage<typeof import('@mikro-orm/core')>('@mikro-orm/core');

/** Loaded when a thread opens the store: the driver it uses (each is another 10-14 MB), the migrator for the boot's task. */
export const onOpen = {
  postgresql: () => loadPackage<typeof import('@mikro-orm/postgresql')>('@mikro-orm/postgresql'),
  libsql: () => loadPackage<typeof import('@mikro-orm/libsql')>('@mikro-orm/libsql'),
  knex: () => loadPackage<typeof import('@mikro-orm/knex')>('@mikro-orm/knex'),
  migrations: () => loadPackage<typeof import('@mikro-orm/migrations')>('@mikro-orm/migrations'),
};
