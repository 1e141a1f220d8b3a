/**
 * The database a test runs against: MEERKAT_TEST_DATABASE=sqlite (default, a file in a temp
 * directory) or postgres (a fresh database per test gateway on MEERKAT_TEST_PG_URL, dropped after).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrate, openStore, type Store } from '../../src/store/orm.ts';

export const TEST_DATABASE = (process.env.MEERKAT_TEST_DATABASE ?? 'sqlite') as 'sqlite' | 'postgres';
const PG_ADMIN_URL = process.env.MEERKAT_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  readonly dataDir: string;
  readonly databaseUrl: string | undefined;
  drop(): Promise<void>;
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** The variables that point a gateway process at this database. */
export function dbEnv(db: { dataDir: string; databaseUrl: string | undefined }): Record<string, string> {
  return { GATEWAY_DATA_DIR: db.dataDir, ...(db.databaseUrl ? { GATEWAY_DATABASE_URL: db.databaseUrl } : {}) };
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), 'meerkat-test-'));
  if (TEST_DATABASE === 'sqlite') {
    return { dataDir, databaseUrl: undefined, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
  }
  const name = `mk_test_${randomBytes(6).toString('hex')}`;
  await admin((c) => c.query(`create database ${name}`));
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    dataDir,
    databaseUrl: url.toString(),
    drop: async () => {
      rmSync(dataDir, { recursive: true, force: true });
      await admin((c) => c.query(`drop database if exists ${name} with (force)`));
    },
  };
}

/**
 * A migrated database of its own and a store on it, for tests of what uses the store directly.
 * `poolSize` 1 by default: on PostgreSQL each statement then runs on the connection the one
 * before used, where a setting leaked would show. Migrating holds a connection of its own for its
 * lock, so it opens a store of its own first.
 */
export async function migratedStore(poolSize = 1): Promise<{ db: TestDatabase; store: Store }> {
  const db = await createTestDatabase();
  const migrator = await openStore({ dataDir: db.dataDir, databaseUrl: db.databaseUrl }, { migrations: true });
  try {
    await migrate(migrator);
  } finally {
    await migrator.close();
  }
  return { db, store: await openStore({ dataDir: db.dataDir, databaseUrl: db.databaseUrl, poolSize }) };
}
