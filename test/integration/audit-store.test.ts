import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import Database from 'libsql';
import { createTestDatabase, TEST_DATABASE, type TestDatabase } from '../helpers/db.ts';
import { migrate, openStore, sqliteFile, type Store } from '../../src/store/orm.ts';
import { insertEvents, type NewAuditRow } from '../../src/store/audit.ts';

let db: TestDatabase;
let store: Store;
before(async () => {
  db = await createTestDatabase();
  store = await openStore({ dataDir: db.dataDir, databaseUrl: db.databaseUrl }, { migrations: true });
  await migrate(store);
});
after(async () => {
  await store?.close();
  await db?.drop();
});

const sql = (text: string, params: unknown[] = []) => store.em().getConnection().execute(text, params, 'all') as Promise<Array<Record<string, unknown>>>;
const count = async (where = '1 = 1', params: unknown[] = []) => Number((await sql(`select count(*) as n from audit_events where ${where}`, params))[0]!.n);

/** A statement through a connection of its own, outside the gateway's pool and ORM. */
async function raw(text: string): Promise<void> {
  if (TEST_DATABASE === 'postgres') {
    const client = new pg.Client({ connectionString: db.databaseUrl });
    await client.connect();
    try {
      await client.query(text);
    } finally {
      await client.end();
    }
    return;
  }
  const conn = new Database(sqliteFile(db.dataDir));
  try {
    conn.pragma('busy_timeout = 5000');
    conn.exec(text);
  } finally {
    conn.close();
  }
}

function event(over: Partial<NewAuditRow> = {}): NewAuditRow {
  return {
    at: 1_000, part: 'changes', action: 'route.update', actorAccount: 'root', actorToken: null, targetKind: 'route',
    targetId: 'r1', targetName: 'Orders', organisation: null, changes: [{ field: 'path', from: '/a', to: '/b' }],
    detail: null, address: null, node: 'n1', traceId: null, attributes: null, ...over,
  };
}

test('audit events: stored with every field, JSON kept as JSON', async () => {
  const [id] = await insertEvents(store, [event({
    part: 'operations', action: 'GET /orders/{id}', actorToken: 'ci', organisation: 'acme', detail: 'Reads an order',
    address: '10.0.0.1', traceId: 'abc', attributes: { 'http.response.status_code': 200, 'gateway.roles': ['staff'] },
  })]);
  const [row] = await sql('select * from audit_events where id = ?', [id]);
  assert.equal(row!.part, 'operations');
  assert.equal(row!.actor_token, 'ci');
  assert.equal(Number(row!.at), 1_000);
  const attributes = typeof row!.attributes === 'string' ? JSON.parse(row!.attributes) : row!.attributes;
  assert.deepEqual(attributes, { 'http.response.status_code': 200, 'gateway.roles': ['staff'] });
});

test('audit events: the database refuses UPDATE and DELETE, through the pool and through a connection of its own', async () => {
  await insertEvents(store, [event({ action: 'kept' })]);
  const before = await count();
  await assert.rejects(sql(`update audit_events set action = 'rewritten'`), /append-only/);
  await assert.rejects(sql('delete from audit_events'), /append-only/);
  await assert.rejects(sql(`delete from audit_events where action = 'kept'`), /append-only/);
  await assert.rejects(raw(`update audit_events set detail = 'rewritten'`), /append-only/);
  await assert.rejects(raw('delete from audit_events'), /append-only/);
  if (TEST_DATABASE === 'postgres') await assert.rejects(raw('truncate audit_events'), /append-only/);
  assert.equal(await count(), before);
  assert.equal(await count(`action = 'rewritten' or detail = 'rewritten'`), 0);
});
