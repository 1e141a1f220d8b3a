/**
 * Upgrades (docs/upgrade.md). A build refuses a database a newer build migrated: `start` exits 78
 * naming the migrations it does not know, `migrate` exits 65, and nothing is written; the
 * migrations table alone decides. `version` names the build's schema. A schedules token minted
 * before tokens had organisations keeps the organisations its schedules act for. One gateway per
 * SQLite data directory: a second is refused, and so is a command that would migrate under it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dbEnv, createTestDatabase, TEST_DATABASE } from '../helpers/db.ts';
import { loopbackEnv } from '../helpers/gateway.ts';
import { runCli, startProcess } from '../helpers/process.ts';
import { call } from '../helpers/http.ts';
import { openStore } from '../../src/store/orm.ts';
import { MIGRATION_NAMES } from '../../src/store/migrations/names.ts';
import { MIGRATIONS } from '../../src/store/migrations/index.ts';
import { startTestGateway } from '../helpers/gateway.ts';
import { signInAdmin } from '../helpers/admin.ts';
import { advanceClock, internalWith, schedulesToken } from '../helpers/scheduler.ts';
import { startUpstream } from '../helpers/upstream.ts';
import { until } from '../helpers/until.ts';

async function rows(db: { dataDir: string; databaseUrl: string | undefined }, sql: string, params: unknown[] = []): Promise<Array<Record<string, unknown>>> {
  const store = await openStore({ dataDir: db.dataDir, databaseUrl: db.databaseUrl });
  try {
    return await store.em().getConnection().execute(sql, params, 'all');
  } finally {
    await store.close();
  }
}

test('the migrations\' names and classes are one list', () => {
  assert.deepEqual(MIGRATIONS.map((m) => m.name), [...MIGRATION_NAMES]);
  assert.deepEqual(MIGRATION_NAMES, [...MIGRATION_NAMES].sort(), 'in the order they apply');
});

test('a database migrated by a newer build is refused by start and migrate, and left as it was', async () => {
  const db = await createTestDatabase();
  try {
    const env = loopbackEnv(dbEnv(db));
    const migrated = await runCli(['migrate'], env);
    assert.equal(migrated.code, 0, migrated.stderr);
    // What a newer build leaves: a migration this one does not list.
    await rows(db, 'insert into meerkat_migrations (name, executed_at) values (?, ?)', ['9999-from-a-newer-build', new Date().toISOString()]);
    const before = await rows(db, 'select name from meerkat_migrations order by id');

    const started = await runCli(['start'], env, 60_000);
    assert.equal(started.code, 78, started.stderr);
    assert.match(started.stderr, /^meerkat: This database was migrated by a newer Meerkat: it holds the migration 9999-from-a-newer-build, which this build \(schema \d{4}-[a-z-]+\) does not know\. Start the newer build, or restore the backup/m);
    assert.doesNotMatch(started.stderr, /listening/, 'no door opened');

    const again = await runCli(['migrate'], env);
    assert.equal(again.code, 65, again.stderr);
    assert.match(again.stderr, /^meerkat: This database was migrated by a newer Meerkat/m);
    assert.deepEqual(await rows(db, 'select name from meerkat_migrations order by id'), before, 'nothing applied or removed');
  } finally {
    await db.drop();
  }
});

test('a node running when a newer build migrates its database stops being ready, and says so once', async () => {
  const t = await startTestGateway();
  try {
    const data = t.url('data');
    assert.equal((await call(`${data}/readyz`)).status, 200);
    await rows(t.db, 'insert into meerkat_migrations (name, executed_at) values (?, ?)', ['9999-from-a-newer-build', new Date().toISOString()]);
    for (let i = 0; i < 2; i++) {
      const ready = await call(`${data}/readyz`);
      assert.equal(ready.status, 503, ready.text);
      assert.equal(ready.json.code, 'not-ready');
      assert.equal(ready.json.database, 'schema-newer');
      assert.match(ready.json.detail, /a newer build migrated the database/);
    }
    const said = t.logs.filter((r) => r.msg.startsWith('a newer build migrated the database'));
    assert.equal(said.length, 1, 'one operational line, whatever the probes');
    assert.equal(said[0]!.attrs.migrations, '9999-from-a-newer-build');
  } finally {
    await t.close();
  }
});

test('meerkat version names the build\'s schema', async () => {
  const r = await runCli(['version'], {});
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, `${JSON.parse((await import('node:fs')).readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version} (schema ${MIGRATION_NAMES.at(-1)})\n`);
});

test('a schedules token from before token organisations keeps acting for the organisations its schedules named', async () => {
  const db = await createTestDatabase();
  const up = await startUpstream();
  try {
    let g = await startTestGateway({ GATEWAY_CLOCK: 'manual' }, db);
    let root = await signInAdmin(g.url('control'));
    await root.put('/api/organisations/acme', { name: 'Acme' });
    await root.put('/api/organisations/globex', { name: 'Globex' });
    await root.put('/api/routes/svc', { upstream: up.origin, paths: ['/svc'] });
    const secret = await schedulesToken(root, 'ops', ['svc'], [], ['acme', 'globex']);
    const other = await schedulesToken(root, 'plain', ['svc'], []);
    const ops = internalWith(() => g.url('internal'), () => secret);
    const body = { routeId: 'svc', path: '/svc/sync', every: 'PT1H' };
    const forAcme = await ops('POST', '/api/schedules', { ...body, organisation: 'acme' });
    assert.equal(forAcme.status, 201, forAcme.text);
    assert.equal((await ops('POST', '/api/schedules', body)).status, 201);
    assert.equal((await internalWith(() => g.url('internal'), () => other)('POST', '/api/schedules', body)).status, 201);
    await g.gw.stop();

    // The database as a build before 0015 left it, once migrated by a build without 0021: the
    // tokens' organisations unset, the schedules for an organisation still there.
    await rows(db, "update tokens set organisations = null where kind = 'schedules'");
    await rows(db, "delete from meerkat_migrations where name = '0021-legacy-token-organisations'");
    const migrated = await runCli(['migrate'], loopbackEnv(dbEnv(db)));
    assert.equal(migrated.code, 0, migrated.stderr);
    const tokens = Object.fromEntries((await rows(db, "select name, organisations from tokens where kind = 'schedules'"))
      .map((r) => [r.name, typeof r.organisations === 'string' ? JSON.parse(r.organisations) : r.organisations]));
    assert.deepEqual(tokens, { ops: ['acme'], plain: null }, 'the organisations its schedules act for, and no more');

    g = await startTestGateway({ GATEWAY_CLOCK: 'manual' }, db);
    root = await signInAdmin(g.url('control'));
    // Its schedule for acme is called again, with acme's membership; globex stays out of reach.
    assert.equal((await ops('POST', `/api/schedules/${forAcme.json.id}/run`)).status, 202);
    await advanceClock(g.url('control'), 'PT1S');
    const run = await until(async () => {
      const runs = await ops('GET', `/api/schedules/${forAcme.json.id}/runs`);
      return runs.json.find((r: { status?: number }) => r.status !== undefined && r.status !== null);
    }, 'the run of the schedule for acme');
    assert.equal(run.status, 200, JSON.stringify(run));
    assert.equal(up.last().headers['x-gateway-organisation'], 'acme');
    const refused = await ops('POST', '/api/schedules', { ...body, organisation: 'globex' });
    assert.equal(refused.status, 403, refused.text);
    await g.gw.stop();
  } finally {
    await up.close();
    await db.drop();
  }
});

test('one gateway per SQLite data directory: a second is refused, a migration under it too, a crash holds nothing', { skip: TEST_DATABASE !== 'sqlite' && 'the embedded database only' }, async () => {
  const db = await createTestDatabase();
  const env = loopbackEnv(dbEnv(db));
  let first = await startProcess(env);
  try {
    const second = await runCli(['start'], env, 60_000);
    assert.equal(second.code, 78, second.stderr);
    assert.match(second.stderr, /^meerkat: Another gateway runs on the data directory .*: the embedded database serves one process\. Stop the other first/m);
    assert.doesNotMatch(second.stderr, /"msg":"listening"/, 'the second opened no door');
    assert.equal((await call(`${first.urls.control}/readyz`)).status, 200, 'the first serves on');

    // A command of a build whose migrations the running gateway lacks is refused; with none pending it runs.
    assert.equal((await runCli(['token', 'create', '--name', 'ci', '--kind', 'admin'], env)).code, 0);
    await rows(db, "delete from meerkat_migrations where name = '0021-legacy-token-organisations'");
    const migrate = await runCli(['migrate'], env);
    assert.equal(migrate.code, 65, migrate.stderr);
    assert.match(migrate.stderr, /^meerkat: A gateway runs on GATEWAY_DATA_DIR=.* this build would migrate its database under it \(0021-legacy-token-organisations\): stop that gateway first/m);

    // Killed outright, the gateway leaves its socket file behind: the next start replaces it.
    first.child.kill('SIGKILL');
    await first.exited;
    first = await startProcess(env);
    assert.equal((await call(`${first.urls.control}/readyz`)).status, 200);
  } finally {
    first.child.kill('SIGTERM');
    await first.exited;
    await db.drop();
  }
});
