import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import Database from 'libsql';
import { migratedStore, TEST_DATABASE, type TestDatabase } from '../helpers/db.ts';
import { sqliteFile, type Store } from '../../src/store/orm.ts';
import { insertEvents, queryEvents, sweepEvents, type AuditQuery, type NewAuditRow } from '../../src/store/audit.ts';
import {
  DEFAULT_AUDIT_RETENTION, DEFAULT_OPERATION_RETENTION, durationBefore, isOperationRetention, readAuditSettings, sweepLines,
  writeAuditSettings, writeLastSweep,
} from '../../src/store/audit-settings.ts';

let db: TestDatabase;
let store: Store;
const opened: Array<{ db: TestDatabase; store: Store }> = [];

/** A migrated database of its own (helpers/db.ts), closed and dropped after the file. */
async function fresh(): Promise<{ db: TestDatabase; store: Store }> {
  const made = await migratedStore();
  opened.push(made);
  return made;
}

before(async () => {
  ({ db, store } = await fresh());
});
after(async () => {
  for (const o of opened) {
    await o.store.close();
    await o.db.drop();
  }
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
  // A replace removes the old row without a DELETE trigger on SQLite; an upsert is an UPDATE on PostgreSQL.
  const rewrite = TEST_DATABASE === 'postgres'
    ? `insert into audit_events select * from audit_events where action = 'kept' on conflict (id) do update set action = 'rewritten'`
    : `insert or replace into audit_events (id, at, part, action, actor_account, actor_token, target_kind, target_id, target_name, organisation, changes, detail, address, node, trace_id, attributes)
       select id, at, part, 'rewritten', actor_account, actor_token, target_kind, target_id, target_name, organisation, changes, detail, address, node, trace_id, attributes from audit_events where action = 'kept'`;
  await assert.rejects(raw(rewrite), /append-only/);
  if (TEST_DATABASE !== 'postgres') await assert.rejects(raw(`replace into audit_events select * from audit_events where action = 'kept'`), /append-only/);
  assert.equal(await count(), before);
  assert.equal(await count(`action = 'rewritten' or detail = 'rewritten'`), 0);
});

test('queries: each filter, newest first, text searched as typed, paged by id with limit 2', async () => {
  const { store } = await fresh();
  const [e1, e2, e3] = await insertEvents(store, [
    event({ at: 1000, action: 'route.update', actorAccount: 'root', targetKind: 'route', targetId: 'r1', targetName: 'Orders' }),
    event({ at: 2000, action: 'account.create', actorAccount: 'alice', actorToken: 'ci', targetKind: 'account', targetId: 'a1', targetName: 'bob', organisation: 'acme', detail: 'created 100% new_account' }),
    event({ part: 'security', at: 3000, action: 'signin.refused', actorAccount: null, targetKind: 'console', targetId: null, targetName: 'mallory', address: '10.0.0.7', detail: 'Wrong password', changes: null }),
  ]);
  const [e4, e5] = await insertEvents(store, [
    event({ part: 'security', at: 4000, action: 'signin', actorAccount: 'bob', targetKind: 'account', targetId: 'a1', targetName: 'bob', organisation: 'acme', address: '10.0.0.8', changes: null }),
    event({ part: 'operations', at: 5000, action: 'GET /orders/{id}', actorAccount: 'alice', targetKind: 'route', targetId: 'r1', targetName: 'shop', organisation: 'beta', detail: 'Reads an ORDER', changes: null, attributes: { 'url.path': '/orders/7' } }),
  ]);
  const ids = async (q: Omit<AuditQuery, 'limit'>) => (await queryEvents(store, { limit: 50, ...q })).map((r) => r.id);

  assert.deepEqual(await ids({}), [e5, e4, e3, e2, e1]);
  assert.deepEqual(await ids({ parts: ['security'] }), [e4, e3]);
  assert.deepEqual(await ids({ parts: ['changes', 'operations'] }), [e5, e2, e1]);
  assert.deepEqual(await ids({ kind: 'signin' }), [e4, e3], 'a family takes its actions');
  assert.deepEqual(await ids({ kind: 'signin.refused' }), [e3]);
  assert.deepEqual(await ids({ kind: 'route' }), [e1]);
  assert.deepEqual(await ids({ kind: 'sign' }), [], 'a family is whole words: sign is not signin');
  assert.deepEqual(await ids({ actor: 'alice' }), [e5, e2]);
  assert.deepEqual(await ids({ target: 'r1' }), [e5, e1]);
  assert.deepEqual(await ids({ target: 'mallory' }), [e3], 'a target by its name');
  assert.deepEqual(await ids({ targetKinds: ['account'] }), [e4, e2]);
  assert.deepEqual(await ids({ targetKinds: ['account', 'console'] }), [e4, e3, e2]);
  assert.deepEqual(await ids({ notTargetKinds: ['console'] }), [e5, e4, e2, e1]);
  assert.deepEqual(await ids({ organisation: 'acme' }), [e4, e2], 'an organisation: its own events only');
  assert.deepEqual(await ids({ organisation: 'acme', grants: [{ parts: ['changes', 'security', 'operations'], targetKinds: ['route'], organisations: null }] }), [], 'the filter narrows the perimeter, never widens it');
  const grant = (parts: string[], targetKinds: string[], organisations: string[] | null) => ({ parts, targetKinds, organisations });
  const everyPart = ['changes', 'security', 'operations'];
  assert.deepEqual(await ids({ grants: [grant(everyPart, ['route'], null)] }), [e5, e1]);
  assert.deepEqual(await ids({ grants: [] }), [], 'no grant reads nothing');
  assert.deepEqual(await ids({ grants: [grant(everyPart, ['route', 'account', 'console'], ['acme'])] }), [e4, e2]);
  assert.deepEqual(await ids({ grants: [grant(everyPart, ['route', 'account'], ['acme', 'beta'])] }), [e5, e4, e2]);
  assert.deepEqual(await ids({ grants: [grant(['changes'], ['route'], null), grant(['security'], ['account'], null)] }), [e4, e1], 'grants joined by OR');
  assert.deepEqual(await ids({ from: 2000, to: 4000 }), [e3, e2], 'from kept, to not');
  assert.deepEqual(await ids({ parts: ['changes'], grants: [grant(everyPart, ['account'], ['acme'])] }), [e2]);
  // Detail and address, whatever the case.
  assert.deepEqual(await ids({ text: 'an order' }), [e5]);
  assert.deepEqual(await ids({ text: 'WRONG pass' }), [e3]);
  assert.deepEqual(await ids({ text: '10.0.0.7' }), [e3]);
  // Wildcards match only themselves.
  assert.deepEqual(await ids({ text: '%' }), [e2]);
  assert.deepEqual(await ids({ text: '_' }), [e2]);
  assert.deepEqual(await ids({ text: '!' }), []);
  assert.deepEqual(await ids({ text: `'; delete from audit_events; --` }), []);
  assert.deepEqual(await ids({}), [e5, e4, e3, e2, e1]);

  const [op] = await queryEvents(store, { limit: 1, parts: ['operations'] });
  assert.deepEqual(op, {
    id: e5, at: 5000, part: 'operations', action: 'GET /orders/{id}', actorAccount: 'alice', actorToken: null, targetKind: 'route',
    targetId: 'r1', targetName: 'shop', organisation: 'beta', changes: null, detail: 'Reads an ORDER', address: null, node: 'n1',
    traceId: null, attributes: { 'url.path': '/orders/7' },
  });

  const seen: string[] = [];
  let afterId: string | undefined;
  for (let pages = 0; pages < 10; pages += 1) {
    const page = await queryEvents(store, { limit: 2, ...(afterId ? { afterId } : {}) });
    const shown = page.slice(0, 2);
    seen.push(...shown.map((r) => r.id));
    if (page.length <= 2) break;
    afterId = shown.at(-1)!.id;
  }
  assert.deepEqual(seen, [e5, e4, e3, e2, e1], 'every event once, newest first');
  assert.equal((await queryEvents(store, { limit: 2, afterId: e2! })).length, 1);
  assert.deepEqual((await queryEvents(store, { limit: Number.NaN })).map((r) => r.id), [e5, e4], 'a limit that is not a number reads one, and says more remain');
});

async function guardRows(s: Store): Promise<number> {
  if (s.driver === 'postgresql') return 0;
  return Number((await s.em().getConnection().execute('select count(*) as n from audit_sweep_guard', [], 'all') as Array<{ n: unknown }>)[0]!.n);
}

/** Leaves the row the failing test refuses for its own reason out, so only the guard can answer. */
async function refusesDelete(s: Store): Promise<void> {
  await assert.rejects(s.em().getConnection().execute(`delete from audit_events where action <> 'boom'`, [], 'run'), /append-only/);
}

test('sweep: deletes exactly what is past each part\'s line, in chunks, and leaves the guard down', async () => {
  const { store } = await fresh();
  await insertEvents(store, [
    ...[100, 200, 300].map((at) => event({ at, action: `c${at}` })),
    ...[100, 300].map((at) => event({ at, part: 'security', action: `s${at}` })),
    ...[100, 200, 300].map((at) => event({ at, part: 'operations', action: `o${at}` })),
  ]);
  const counts = await sweepEvents(store, { changesBefore: 250, securityBefore: 150, operationsBefore: 100 }, { chunk: 1 });
  assert.deepEqual(counts, { changes: 2, security: 1, operations: 0 });
  const left = (await queryEvents(store, { limit: 50 })).map((r) => r.action).sort();
  assert.deepEqual(left, ['c300', 'o100', 'o200', 'o300', 's300']);
  assert.equal(await guardRows(store), 0);
  await refusesDelete(store);
  assert.deepEqual(await sweepEvents(store, { changesBefore: 250, securityBefore: 150, operationsBefore: 100 }), { changes: 0, security: 0, operations: 0 });
  assert.deepEqual(await sweepEvents(store, { changesBefore: 1000, securityBefore: 1000, operationsBefore: 1000 }), { changes: 1, security: 1, operations: 3 });
});

test('sweep: one that fails half-way keeps what it had not committed and leaves no guard behind', async () => {
  const { store } = await fresh();
  const conn = () => store.em().getConnection();
  // A deletion the database refuses for its own reason, as a full disk or a lost lock would.
  if (store.driver === 'postgresql') {
    await conn().execute(`create function test_refuse_boom() returns trigger language plpgsql as $$
begin if old.action = 'boom' then raise exception 'boom refused'; end if; return old; end $$`);
    await conn().execute('create trigger test_boom before delete on audit_events for each row execute function test_refuse_boom()');
  } else {
    await conn().execute(`create trigger test_boom before delete on audit_events when old.action = 'boom' begin select raise(abort, 'boom refused'); end`);
  }
  await insertEvents(store, [event({ at: 100, action: 'a' }), event({ at: 200, action: 'boom' }), event({ at: 300, action: 'c' })]);
  await assert.rejects(sweepEvents(store, { changesBefore: 1000, securityBefore: 0, operationsBefore: 0 }, { chunk: 1 }), /boom refused/);
  assert.deepEqual((await queryEvents(store, { limit: 50 })).map((r) => r.action), ['c', 'boom'], 'the chunk before the failure stays swept');
  assert.equal(await guardRows(store), 0);
  await refusesDelete(store);
  await assert.rejects(conn().execute(`update audit_events set action = 'x'`, [], 'run'), /append-only/);

  await conn().execute('drop trigger test_boom' + (store.driver === 'postgresql' ? ' on audit_events' : ''));
  assert.deepEqual(await sweepEvents(store, { changesBefore: 1000, securityBefore: 0, operationsBefore: 0 }), { changes: 2, security: 0, operations: 0 });
  assert.equal(await guardRows(store), 0);
});

test('retention settings: defaults, root\'s choice kept with who made it, the last sweep in a row of its own', async () => {
  const { store } = await fresh();
  const first = await readAuditSettings(store);
  assert.deepEqual(first, { retention: DEFAULT_AUDIT_RETENTION, operationRetention: DEFAULT_OPERATION_RETENTION, push: { audit: false, console: false }, updatedAt: null, updatedBy: null, lastSweep: null });
  assert.equal(first.retention, 'P1Y');
  assert.equal(first.operationRetention, 'P1M');

  await writeAuditSettings(store, { retention: 'P3M', operationRetention: 'P7D', push: { audit: true, console: false } }, 5_000, 'root');
  await writeLastSweep(store, { at: 6_000, deleted: { changes: 3, security: 0, operations: 1 } });
  assert.deepEqual(await readAuditSettings(store), {
    retention: 'P3M', operationRetention: 'P7D', push: { audit: true, console: false }, updatedAt: 5_000, updatedBy: 'root', lastSweep: { at: 6_000, deleted: { changes: 3, security: 0, operations: 1 } },
  });
  await assert.rejects(writeAuditSettings(store, { retention: 'P4M' as never, operationRetention: 'P7D', push: { audit: false, console: false } }, 7_000, 'root'));
  await assert.rejects(writeAuditSettings(store, { retention: 'P1Y', operationRetention: 'P6D', push: { audit: false, console: false } }, 7_000, 'root'));
  assert.equal((await readAuditSettings(store)).retention, 'P3M');

  for (const ok of ['P7D', 'P365D', 'P2W', 'P52W', 'P1M', 'P12M', 'P1Y']) assert.equal(isOperationRetention(ok), true, ok);
  for (const no of ['P6D', 'P366D', 'P53W', 'P13M', 'P2Y', 'P0D', 'P1M2D', 'PT24H', '30', 7]) assert.equal(isOperationRetention(no), false, String(no));

  // Calendar months and years, in UTC.
  const now = Date.UTC(2026, 4, 31, 12);
  assert.equal(durationBefore(now, 'P3M'), Date.UTC(2026, 1, 28, 12), 'May 31 less three months: the last day of February, not March 3');
  assert.equal(durationBefore(Date.UTC(2028, 1, 29), 'P1Y'), Date.UTC(2027, 1, 28));
  assert.equal(durationBefore(now, 'P1Y'), Date.UTC(2025, 4, 31, 12));
  assert.equal(durationBefore(now, 'P2W'), Date.UTC(2026, 4, 17, 12));
  assert.deepEqual(sweepLines(now, { retention: 'P6M', operationRetention: 'P7D' }), {
    changesBefore: Date.UTC(2025, 10, 30, 12),
    securityBefore: Date.UTC(2025, 10, 30, 12),
    operationsBefore: Date.UTC(2026, 4, 24, 12),
  });
});

test('batches: more rows than one INSERT takes go in one transaction, all or nothing, ids in write order', async () => {
  const { store } = await fresh();
  const many = Array.from({ length: 1_201 }, (_, i) => event({ at: i, action: `bulk.${i}` }));
  const ids = await insertEvents(store, many);
  assert.deepEqual([...ids].sort(), ids, 'ids sort in the order written');
  assert.equal(new Set(ids).size, 1_201);
  const newest = await queryEvents(store, { limit: 2 });
  assert.deepEqual(newest.map((r) => r.action), ['bulk.1200', 'bulk.1199', 'bulk.1198']);

  // The last chunk fails (an id already taken): the chunks before it are rolled back with it.
  const failing = Array.from({ length: 1_100 }, (_, i) => event({ action: `lost.${i}` }));
  failing[1_050] = { ...failing[1_050]!, id: ids[0]! };
  await assert.rejects(insertEvents(store, failing));
  assert.equal((await queryEvents(store, { limit: 5, kind: 'lost' })).length, 0);
  assert.equal((await queryEvents(store, { limit: 2_000 })).length, 1_201);
});
