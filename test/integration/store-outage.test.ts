/**
 * A database that cannot take a request is an outage, not a bug: the API answers 503
 * `store.unavailable` with Retry-After (never a 500, never the driver's words), the operator reads
 * a warning, the data plane goes on serving, and the same request succeeds once the database is
 * back. SQLite: another process holds the one writer past the busy timeout. PostgreSQL: the
 * database stops taking connections and the gateway's are ended.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { spawn } from 'node:child_process';
import { createTestDatabase, migratedStore, TEST_DATABASE, type TestDatabase } from '../helpers/db.ts';
import { startTestGateway } from '../helpers/gateway.ts';
import { signInAdmin } from '../helpers/admin.ts';
import { call } from '../helpers/http.ts';
import { startUpstream } from '../helpers/upstream.ts';
import { advanceClock, internalWith, schedulingStand, schedulesToken } from '../helpers/scheduler.ts';
import { sqliteFile } from '../../src/store/orm.ts';

/** Holds SQLite's write lock until its standard input closes. */
const HOLDER = `
const Database = require('libsql');
const db = new Database(process.argv[1]);
db.exec('begin exclusive');
process.stdout.write('held\\n');
process.stdin.resume();
process.stdin.on('end', () => { db.exec('rollback'); db.close(); process.exit(0); });
`;

/** Takes the database away from the gateway; `end` gives it back. */
async function outage(db: TestDatabase): Promise<{ end(): Promise<void> }> {
  if (TEST_DATABASE === 'sqlite') {
    // Another process, as an operator's sqlite3 shell or a backup tool would be.
    const holder = spawn(process.execPath, ['-e', HOLDER, sqliteFile(db.dataDir)], { stdio: ['pipe', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      holder.stdout!.once('data', () => resolve());
      holder.once('exit', (code) => reject(new Error(`the lock holder exited (${code})`)));
    });
    return {
      end: async () => {
        const gone = new Promise((r) => holder.once('exit', r));
        holder.stdin!.end();
        await gone;
      },
    };
  }
  const url = new URL(db.databaseUrl!);
  const name = url.pathname.slice(1);
  url.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  await admin.query(`alter database ${name} with allow_connections false`);
  await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [name]);
  return {
    end: async () => {
      await admin.query(`alter database ${name} with allow_connections true`);
      await admin.end();
    },
  };
}

test('the database away: the API answers 503 store.unavailable with Retry-After, the data plane serves, the write goes through after', async () => {
  const db = await createTestDatabase();
  const t = await startTestGateway({}, db);
  const up = await startUpstream();
  let away: { end(): Promise<void> } | undefined;
  try {
    const admin = await signInAdmin(t.url('control'));
    assert.equal((await admin.put('/api/routes/open', { upstream: up.origin, paths: ['/open'] })).status, 201);
    const seen = t.logs.length;
    away = await outage(db);
    const refused = await admin.put('/api/roles/during', {});
    assert.equal(refused.status, 503, refused.text);
    assert.equal(refused.json.code, 'store.unavailable', refused.text);
    assert.equal(refused.headers['retry-after'], '5');
    assert.match(String(refused.headers['content-type']), /^application\/problem\+json/);
    assert.doesNotMatch(refused.text, /knex|Transaction query|SQLITE|pg_|terminating|accepting connections/i, 'the driver\'s words stay in the log');
    const warned = t.logs.slice(seen).find((l) => l.msg === 'request refused: the database cannot take it now');
    assert.ok(warned, JSON.stringify(t.logs.slice(seen).map((l) => [l.level, l.msg])));
    assert.equal(warned.level, 'warn');
    assert.ok(!t.logs.slice(seen).some((l) => l.msg === 'request failed'), 'not reported as a bug');
    // The data plane answers from memory.
    const served = await call(`${t.url('data')}/open/during`);
    assert.equal(served.status, 200, served.text);
    await away.end();
    away = undefined;
    let after = await admin.put('/api/roles/during', {});
    for (let i = 0; i < 100 && after.status === 503; i++) {
      await new Promise((r) => setTimeout(r, 200));
      after = await admin.put('/api/roles/during', {});
    }
    assert.equal(after.status, 201, after.text);
    assert.equal((await admin.get('/api/roles/during')).status, 200);
  } finally {
    await away?.end();
    await t.close();
    await up.close();
    await db.drop();
  }
});

test('a transaction the database refused leaves no connection broken: the next one, once it is back, goes through', async () => {
  const { db, store } = await migratedStore();
  // Statements in a transaction, on its own connection, as the actors write.
  const write = (name: string) => store.em().transactional(async (tx) => {
    await tx.getConnection().execute(`create table if not exists ${name} (a integer)`, [], 'run', tx.getTransactionContext());
  });
  try {
    const away = await outage(db);
    try {
      await assert.rejects(write('during_outage'));
    } finally {
      await away.end();
    }
    // SQLite: a statement libsql failed stayed in progress on the pool's one connection, and every
    // transaction after it failed too ("cannot commit transaction - SQL statements in progress").
    // PostgreSQL: the pool's ended connections are replaced as they are found.
    const tries = TEST_DATABASE === 'sqlite' ? 1 : 10;
    let done = false;
    for (let i = 0; i < tries && !done; i++) {
      done = await write(`after_outage_${i}`).then(() => true, async () => {
        await new Promise((r) => setTimeout(r, 200));
        return false;
      });
    }
    assert.ok(done, 'the write after the outage went through');
    await write('and_the_next');
  } finally {
    await store.close();
    await db.drop();
  }
});

test('a turn due while the database was away goes out seconds after it is back, not at the once-a-minute backstop', async () => {
  const { t, up, root } = await schedulingStand();
  let away: { end(): Promise<void> } | undefined;
  try {
    assert.equal((await root.put('/api/routes/jobs', { upstream: up.origin, paths: ['/jobs'] })).status, 201);
    const token = await schedulesToken(root, 'jobs-svc', ['jobs'], []);
    const internal = internalWith(() => t.url('internal'), () => token);
    const created = await internal('POST', '/api/schedules', { routeId: 'jobs', roles: [], path: '/jobs/outage', every: 'PT1H' });
    assert.equal(created.status, 201, created.text);
    const seen = t.logs.length;
    away = await outage(t.db);
    await advanceClock(t.url('control'), 'PT1H');
    for (let i = 0; i < 400 && !t.logs.slice(seen).some((l) => l.msg.startsWith('scheduler tick failed')); i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(t.logs.slice(seen).some((l) => l.msg.startsWith('scheduler tick failed; looking again in 5 s')), JSON.stringify(t.logs.slice(seen).map((l) => l.msg)));
    await away.end();
    away = undefined;
    // 5 s, then 10 and 20 while the pool finds its connections again: all before the backstop's minute.
    let moved = 0;
    for (const step of [5, 10, 20]) {
      await advanceClock(t.url('control'), `PT${step}S`);
      moved += step;
      for (let i = 0; i < 40 && up.requests.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
      if (up.requests.length > 0) break;
    }
    assert.equal(up.requests.length, 1, 'the turn went out once');
    assert.ok(moved < 60, `it went out ${moved} s after the database came back`);
  } finally {
    await away?.end();
    await t.close();
    await up.close();
  }
});
