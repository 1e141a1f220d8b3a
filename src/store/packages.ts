/**
 * MikroORM's packages, loaded with `require`. Imported from an ES module, a CommonJS package is
 * first read by Node's export lexer, file by file along its re-exports, to name its exports: about
 * 150 ms of every thread that opens the store (five actors and the boot's task at each start, the
 * same again at every actor restart), spent on names this code reads off the module object anyway.
 * `require` loads the same files, once per thread, without it. Types still come from `import type`.
 */
import { createRequire } from 'node:module';

const load = createRequire(import.meta.url);

export const orm = load('@mikro-orm/core') as typeof import('@mikro-orm/core');

/** The driver a thread uses, loaded when it opens the store (each is another 10-14 MB). */
export const drivers = {
  postgresql: () => load('@mikro-orm/postgresql') as typeof import('@mikro-orm/postgresql'),
  libsql: () => load('@mikro-orm/libsql') as typeof import('@mikro-orm/libsql'),
  knex: () => load('@mikro-orm/knex') as typeof import('@mikro-orm/knex'),
  migrations: () => load('@mikro-orm/migrations') as typeof import('@mikro-orm/migrations'),
};
