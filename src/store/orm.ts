import { mkdirSync } from 'node:fs';
import { assertKnownSchema } from './schema-guard.ts';
import { DatabaseRefusedError, refusedByServer } from './database-refused.ts';
import { MIGRATION_NAMES } from './migrations/names.ts';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { MikroORM, EntityManager } from '@mikro-orm/core';
import { ENTITIES } from './entities.ts';
import { onOpen } from './packages.ts';

/** What a thread needs to open the store: plain data, so it crosses to workers. */
export interface StoreOptions {
  readonly dataDir: string;
  readonly databaseUrl: string | undefined;
  /** Connections this opener may hold (each actor opens its own). */
  readonly poolSize?: number;
}

/**
 * Whether this opener runs migrations. Only the boot worker and the CLI do: the migrator and the
 * migrations weigh about 12 MB in every thread that loads them, and the actors never need them.
 */
export interface OpenOptions {
  readonly migrations?: boolean;
  /**
   * Where the driver's own words go (knex says "Connection Error: …" when PostgreSQL ends a
   * connection): the actor's operational log, not raw lines on standard output around it.
   */
  readonly log?: { warn(msg: string, attrs: Record<string, unknown>): void; error(msg: string, attrs: Record<string, unknown>): void };
}

export interface Store {
  readonly orm: MikroORM;
  readonly driver: 'sqlite' | 'postgresql';
  /** Opened with its migrations (`migrate` needs them). */
  readonly migrations: boolean;
  /** A fresh unit of work. */
  em(): EntityManager;
  /**
   * Cheap round trip, for readiness: the migrations the database holds that this build does not
   * know (a newer build upgraded the cluster's database under this node), none when all is well.
   */
  ping(): Promise<string[]>;
  close(): Promise<void>;
}

export function sqliteFile(dataDir: string): string {
  return join(dataDir, 'meerkat.db');
}

/**
 * SQLite transactions begin IMMEDIATE: the write lock is taken at BEGIN, where the busy timeout
 * makes a writer wait its turn. Knex begins them DEFERRED, so a transaction that read first and
 * then wrote failed at once (SQLITE_BUSY_SNAPSHOT) whenever another thread had committed in
 * between; worse, the libsql driver leaves the failed statement open, and the connection then
 * keeps its stale snapshot until the pool replaces it, failing every retry meanwhile. Every
 * actor writes the one file (configuration, schedules, the audit trail), so this is the rule.
 * Knex is reached through the ORM's own copy, the one whose transactions we open.
 */
function beginImmediate(): void {
  const fromOrm = createRequire(createRequire(import.meta.url).resolve('@mikro-orm/knex'));
  const Transaction = fromOrm('knex/lib/dialects/sqlite3/execution/sqlite-transaction.js') as {
    prototype: { begin(conn: unknown): Promise<unknown>; query(conn: unknown, sql: string): Promise<unknown>; __immediate?: true };
  };
  if (Transaction.prototype.__immediate) return;
  Transaction.prototype.begin = function begin(this: { query(conn: unknown, sql: string): Promise<unknown> }, conn: unknown) {
    return this.query(conn, 'BEGIN IMMEDIATE;');
  };
  Transaction.prototype.__immediate = true;
}

/**
 * A statement libsql failed (SQLITE_BUSY once the busy timeout ran out, a full disk) stays in
 * progress on its connection until the collector happens to free it: the next transaction on that
 * connection began, could not commit ("SQL statements in progress"), and held the write lock for
 * every thread of the gateway until then. A connection that failed a statement is therefore
 * retired: the pool's validation (the dialect's ten-second rule, which reads `__created`) replaces
 * it at its next acquire, and what comes after runs on a fresh one.
 */
function retireFailedConnections(dialect: { prototype: { _query(conn: { __created?: number }, obj: unknown): Promise<unknown>; __retires?: true } }): void {
  if (dialect.prototype.__retires) return;
  const query = dialect.prototype._query;
  dialect.prototype._query = async function retiring(this: unknown, conn: { __created?: number }, obj: unknown) {
    try {
      return await query.call(this, conn, obj);
    } catch (err) {
      if (conn) conn.__created = 0;
      throw err;
    }
  };
  dialect.prototype.__retires = true;
}

/** Knex's logger (`log` of its options), said through ours. */
function driverLog(log: NonNullable<OpenOptions['log']>) {
  const text = (m: unknown) => (m instanceof Error ? m.message : String(m)).slice(0, 500);
  return {
    warn: (m: unknown) => log.warn('database driver warning', { detail: text(m) }),
    error: (m: unknown) => log.error('database driver error', { detail: text(m) }),
    deprecate: () => undefined,
    debug: () => undefined,
  };
}

/** How long a SQLite writer waits for the lock another thread holds before it gives up. */
const SQLITE_BUSY_TIMEOUT_MS = 5000;

export async function openStore(options: StoreOptions, open: OpenOptions = {}): Promise<Store> {
  const migrations = open.migrations
    ? await Promise.all([onOpen.migrations(), import('./migrations/index.ts')]).then(([m, list]) => ({
        extensions: [m.Migrator],
        migrations: { migrationsList: list.MIGRATIONS, tableName: MIGRATIONS_TABLE, snapshot: false, silent: true },
      }))
    : {};
  const common = {
    entities: ENTITIES,
    ...migrations,
    discovery: { warnWhenNoEntities: false },
    allowGlobalContext: false,
    debug: false,
    // Our own operational log reports store failures; the ORM's logger would write around it.
    logger: () => undefined,
    ...(open.log !== undefined ? { driverOptions: { log: driverLog(open.log) } } : {}),
  };
  let orm: MikroORM;
  let driver: Store['driver'];
  // Each thread loads only the driver it uses (the other one is another 10-14 MB).
  if (options.databaseUrl) {
    driver = 'postgresql';
    const { MikroORM: PostgresORM } = onOpen.postgresql();
    try {
      orm = await PostgresORM.init({
        ...common,
        clientUrl: options.databaseUrl,
        pool: { min: 0, max: options.poolSize ?? 4 },
        // A database named wrong must not become a new, empty gateway with a new root: the
        // database is the operator's to create (docs/architecture.md).
        ensureDatabase: false,
      }) as unknown as MikroORM;
      await orm.em.getConnection().execute('select 1');
    } catch (err) {
      const message = databaseRefusal(options.databaseUrl, err);
      throw refusedByServer(err) ? new DatabaseRefusedError(message) : new Error(message);
    }
  } else {
    driver = 'sqlite';
    mkdirSync(options.dataDir, { recursive: true });
    beginImmediate();
    retireFailedConnections(onOpen.knex().LibSqlKnexDialect as unknown as Parameters<typeof retireFailedConnections>[0]);
    const { MikroORM: LibSqlORM } = onOpen.libsql();
    orm = await LibSqlORM.init({
      ...common,
      dbName: sqliteFile(options.dataDir),
      // The pool replaces its connection every ten seconds (the libsql dialect's validation), and
      // a pragma holds for one connection only: each new one is set up here, or it would answer
      // "database is locked" at once whenever another thread writes, and drop foreign keys.
      pool: {
        afterCreate: (raw: { exec(sql: string): unknown }, done: (err: Error | null, conn: unknown) => void) => {
          try {
            raw.exec(`pragma busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}; pragma foreign_keys = on`);
            done(null, raw);
          } catch (err) {
            done(err as Error, raw);
          }
        },
      },
    }) as unknown as MikroORM;
    // Several threads and the CLI share the file: WAL lets readers go on while one writes (the
    // mode is the file's, kept across connections).
    await orm.em.getConnection().execute('pragma journal_mode = WAL');
  }
  return {
    orm,
    driver,
    migrations: open.migrations === true,
    em: () => orm.em.fork(),
    ping: async () => {
      const rows = (await orm.em.getConnection().execute(`select name from ${MIGRATIONS_TABLE}`)) as Array<{ name: string }>;
      const known = new Set(MIGRATION_NAMES);
      return rows.map((r) => r.name).filter((name) => !known.has(name));
    },
    close: () => orm.close(true),
  };
}

/** The sentence for a PostgreSQL database that cannot be used: where, why, and what to do. */
function databaseRefusal(url: string, err: unknown): string {
  let where = 'GATEWAY_DATABASE_URL';
  try {
    const u = new URL(url);
    where = `the PostgreSQL database "${decodeURIComponent(u.pathname.slice(1))}" at ${u.hostname}:${u.port || '5432'} (GATEWAY_DATABASE_URL)`;
  } catch {
    // settings.ts refused a URL it cannot read: this is the variable's name alone.
  }
  const reason = err instanceof Error ? err.message : String(err);
  const hint = /does not exist/.test(reason) && /database/.test(reason)
    ? ': create it first (CREATE DATABASE …); the gateway makes its tables, never the database'
    : '';
  return `${where} cannot be used: ${reason}${hint}`;
}

// Any constant shared by every node: the key of the advisory lock that serialises migrations.
const MIGRATION_LOCK = 0x6d65_6572; // "meer"
/** Held by each configuration write on PostgreSQL, for its transaction (see `lockConfiguration`). */
const CONFIGURATION_LOCK = 0x6b61_7400; // "kat"

interface RawConnection {
  query(sql: string): Promise<unknown>;
}

const MIGRATIONS_TABLE = 'meerkat_migrations';

/**
 * Whether the database holds a gateway (its migrations table), asked without creating anything:
 * a command that works on a gateway's data refuses a database that holds none rather than
 * migrating a new, empty gateway into it.
 */
export async function holdsGateway(store: Store): Promise<boolean> {
  const sql = store.driver === 'postgresql'
    ? `select 1 as present where to_regclass('${MIGRATIONS_TABLE}') is not null`
    : `select 1 as present from sqlite_master where type = 'table' and name = '${MIGRATIONS_TABLE}'`;
  const rows = await store.orm.em.getConnection().execute<Array<{ present: number }>>(sql);
  return rows.length > 0;
}

/**
 * Brings the schema to the newest migration; returns the names applied now. On PostgreSQL the
 * nodes of a cluster may start together: a session advisory lock, held on one connection of its
 * own for the whole run, lets one node migrate while the others wait and then find nothing to do.
 */
export async function migrate(store: Store): Promise<string[]> {
  if (!store.migrations) throw new Error('the store was opened without its migrations (openStore(…, { migrations: true }))');
  const up = async () => {
    const migrator = store.orm.getMigrator();
    assertKnownSchema((await migrator.getExecutedMigrations()).map((m) => m.name), MIGRATION_NAMES);
    return (await migrator.up()).map((m) => m.name);
  };
  if (store.driver !== 'postgresql') return up();
  const knex = (store.orm.em.getConnection() as unknown as { getKnex(): { client: { acquireConnection(): Promise<RawConnection>; releaseConnection(c: RawConnection): Promise<void> } } }).getKnex();
  const conn = await knex.client.acquireConnection();
  try {
    await conn.query(`select pg_advisory_lock(${MIGRATION_LOCK})`);
    try {
      return await up();
    } finally {
      await conn.query(`select pg_advisory_unlock(${MIGRATION_LOCK})`);
    }
  } finally {
    await knex.client.releaseConnection(conn);
  }
}

/**
 * Configuration writes of a cluster, one after the other: the first statement of each write's
 * transaction on PostgreSQL, released at its commit or rollback. Each write checks its rules (no
 * role cycle, no role deleted while named, one certificate per name and plane, create or replace
 * by id) against rows it reads in its transaction; at READ COMMITTED two nodes writing at once
 * would each pass the check on rows without the other's write. Reads after the lock see every
 * write committed before it. SQLite's transactions take its one write lock at BEGIN already.
 */
export async function lockConfiguration(em: EntityManager, driver: Store['driver']): Promise<void> {
  if (driver !== 'postgresql') return;
  await em.getConnection().execute(`select pg_advisory_xact_lock(${CONFIGURATION_LOCK})`, [], 'all', em.getTransactionContext());
}
