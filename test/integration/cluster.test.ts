import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dbEnv, createTestDatabase, TEST_DATABASE } from '../helpers/db.ts';
import { loopbackEnv } from '../helpers/gateway.ts';
import { call } from '../helpers/http.ts';
import { startProcess } from '../helpers/process.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { signInAdmin } from '../helpers/admin.ts';
import pg from 'pg';
import { startUpstream } from '../helpers/upstream.ts';

/** Several nodes on one database is the PostgreSQL (cluster) mode: on SQLite these report as skipped. */
const cluster = { skip: TEST_DATABASE === 'postgres' ? false : 'several nodes share one PostgreSQL database; the SQLite file serves one node' };

// Several nodes on one database is the PostgreSQL (cluster) mode; the SQLite file serves one node.
{
  test('cluster mode: three nodes starting together on an empty database migrate once and all serve', cluster, async () => {
    const db = await createTestDatabase();
    try {
      const env = loopbackEnv(dbEnv(db));
      delete (env as Record<string, string | undefined>).GATEWAY_ROOT_PASSWORD;
      // Three processes of five worker threads each, all compiling through tsx on a 2-core machine
      // at once: a start takes several times a single one's.
      const nodes = await Promise.all([1, 2, 3].map((n) => startProcess({ ...env, GATEWAY_NODE_NAME: `node-${n}` }, 120_000)));
      for (const node of nodes) {
        const r = await call(`${node.urls.control}/readyz`);
        assert.equal(r.status, 200, r.text);
      }
      const migrated = nodes.filter((n) => /"msg":"database migrated"/.test(n.stderr()));
      assert.equal(migrated.length, 1, 'exactly one node applied the migrations');
      // One root: exactly one node generated (and printed) its password.
      const printed = nodes.filter((n) => /the account "root" was created/.test(n.stderr()));
      assert.equal(printed.length, 1);
      for (const node of nodes) node.child.kill('SIGTERM');
      for (const node of nodes) assert.equal(await node.exited, 0);
    } finally {
      await db.drop();
    }
  });

  test('a change whose transaction commits after a newer one still reaches the node', cluster, async () => {
    const t = await startTestGateway();
    const other = new pg.Client({ connectionString: t.db.databaseUrl });
    await other.connect();
    try {
      const root = await signInAdmin(t.url('control'));
      await root.put('/api/roles/jobs', {});
      assert.equal((await root.put('/api/routes/slow', { upstream: 'http://127.0.0.1:9', paths: ['/slow'], rule: { roles: ['jobs'] } })).status, 201);
      // Another node's writer takes its change id, then stalls before committing.
      await other.query('begin');
      await other.query(`insert into changes (kind, at) values ('route', 0)`);
      await other.query(`update routes set paths = '["/slow", "/late"]' where id = 'slow'`);
      // A newer change commits first and is folded in.
      assert.equal((await root.put('/api/routes/fast', { upstream: 'http://127.0.0.1:9', paths: ['/fast'], rule: { roles: ['jobs'] } })).status, 201);
      assert.equal((await call(`${t.url('data')}/fast/x`)).status, 401);
      // Let a poll pass while the older change is still invisible.
      await new Promise((r) => setTimeout(r, 1500));
      await other.query('commit');
      let status = 0;
      for (let i = 0; i < 200 && status !== 401; i++) {
        status = (await call(`${t.url('data')}/late/x`)).status;
        if (status !== 401) await new Promise((r) => setTimeout(r, 25));
      }
      assert.equal(status, 401, 'the node learned the path written by the late commit');
    } finally {
      await other.end();
      await t.close();
    }
  });

  test('every committed configuration change is announced on meerkat_config, whoever wrote it', cluster, async () => {
    const t = await startTestGateway();
    const listener = new pg.Client({ connectionString: t.db.databaseUrl });
    const writer = new pg.Client({ connectionString: t.db.databaseUrl });
    await Promise.all([listener.connect(), writer.connect()]);
    try {
      const heard: string[] = [];
      listener.on('notification', (n) => heard.push(n.channel));
      await listener.query('listen meerkat_config');
      const until = async (count: number) => {
        for (let i = 0; i < 200 && heard.length < count; i++) await new Promise((r) => setTimeout(r, 10));
        return heard.length;
      };
      const root = await signInAdmin(t.url('control'));
      const before = await until(1); // the sign-in wrote a session change
      assert.ok(before >= 1, 'a sign-in is announced');
      await root.put('/api/roles/ops', {});
      assert.equal(await until(before + 1), before + 1, 'a write through the API is announced');
      // Not until the commit: a listener never reloads before the change is visible.
      await writer.query('begin');
      await writer.query(`insert into changes (kind, at) values ('route', 0)`);
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(heard.length, before + 1, 'nothing is heard before the commit');
      await writer.query('commit');
      assert.equal(await until(before + 2), before + 2, 'a row written by another process is announced at its commit');
    } finally {
      await listener.end();
      await writer.end();
      await t.close();
    }
  });
}

test('the change bus connects again after its connection is cut, and says so once', cluster, async () => {
  const t = await startTestGateway();
  const admin = new pg.Client({ connectionString: t.db.databaseUrl });
  await admin.connect();
  const listeners = async () => Number((await admin.query(`select count(*)::int as n from pg_stat_activity where datname = current_database() and query ilike 'LISTEN %'`)).rows[0].n);
  try {
    const before = await listeners();
    assert.ok(before >= 2, `the config and certificate actors listen (${before})`);
    await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query ilike 'LISTEN %'`);
    let now = 0;
    for (let i = 0; i < 100 && now < before; i++) {
      await new Promise((r) => setTimeout(r, 100));
      now = await listeners();
    }
    assert.ok(now >= before, `listening again (${now} of ${before})`);
    assert.ok(t.logs.some((l) => /change bus lost its connection/.test(l.msg)), 'reported');
  } finally {
    await admin.end();
    await t.close();
  }
});

/** Two nodes on one database, both closed after `body` (b first: a made the database). */
async function twoNodes(body: (a: TestGateway, b: TestGateway) => Promise<void>): Promise<void> {
  const a = await startTestGateway({ GATEWAY_NODE_NAME: 'node-a' });
  const b = await startTestGateway({ GATEWAY_NODE_NAME: 'node-b' }, a.db);
  try {
    await body(a, b);
  } finally {
    await b.close();
    await a.close();
  }
}

test('two nodes writing the configuration at once keep its rules, and never answer 500', cluster, async () => {
  await twoNodes(async (a, b) => {
    const db = new pg.Client({ connectionString: a.db.databaseUrl });
    await db.connect();
    try {
      const onA = await signInAdmin(a.url('control'));
      const onB = await signInAdmin(b.url('control'));
      for (let round = 0; round < 4; round++) {
        // Each node alone refuses a cycle; at once, each read the other's role without the other's implies.
        const [x, y] = await Promise.all([onA.put(`/api/roles/ca${round}`, { implies: [`cb${round}`] }), onB.put(`/api/roles/cb${round}`, { implies: [`ca${round}`] })]);
        const statuses = [x.status, y.status].sort();
        assert.ok(statuses.every((s) => s !== 500), `${x.status} ${x.text} / ${y.status} ${y.text}`);
        // The first to be written has no role to imply yet (400 role.unknown) or creates it; never both with each other.
        // Read from the database: a node's view follows the other's write a moment later.
        const rows = (await db.query('select name, implies from roles where name = any($1)', [[`ca${round}`, `cb${round}`]])).rows as Array<{ name: string; implies: string[] | string }>;
        const impliesOf = (name: string) => {
          const v = rows.find((r) => r.name === name)?.implies;
          return typeof v === 'string' ? JSON.parse(v) as string[] : v ?? [];
        };
        const ca = impliesOf(`ca${round}`);
        const cb = impliesOf(`cb${round}`);
        assert.ok(!(ca.includes(`cb${round}`) && cb.includes(`ca${round}`)), `no cycle: ${JSON.stringify(rows)}`);

        // The same id created on both nodes at once: one creates, the other replaces.
        const route = { upstream: 'http://127.0.0.1:9', paths: [`/r${round}`] };
        const made = await Promise.all([onA.put(`/api/routes/r${round}`, route), onB.put(`/api/routes/r${round}`, route)]);
        assert.deepEqual(made.map((m) => m.status).sort(), [200, 201], made.map((m) => `${m.status} ${m.text}`).join(' / '));

        // A role deleted on one node while a route names it on the other: one of the two is refused.
        await onA.put(`/api/roles/ghost${round}`, {});
        const [gone, named] = await Promise.all([onA.del(`/api/roles/ghost${round}`), onB.put(`/api/routes/g${round}`, { upstream: 'http://127.0.0.1:9', paths: [`/g${round}`], rule: { roles: [`ghost${round}`] } })]);
        assert.ok([gone.status, named.status].every((s) => s < 500), `${gone.status} ${gone.text} / ${named.status} ${named.text}`);
        assert.ok(!(gone.status === 204 && named.status < 300), `a route names a role that no longer exists: ${gone.status} / ${named.status} ${named.text}`);

        // Deleted on both at once: once.
        const dropped = await Promise.all([onA.del(`/api/routes/r${round}`), onB.del(`/api/routes/r${round}`)]);
        assert.deepEqual(dropped.map((d) => d.status).sort(), [204, 404], dropped.map((d) => `${d.status} ${d.text}`).join(' / '));
      }
    } finally {
      await db.end();
    }
  });
});

test('a write is answered once every node serves it: a token revoked on one node is refused at once on the other', cluster, async () => {
  const up = await startUpstream();
  try {
    await twoNodes(async (a, b) => {
      const onA = await signInAdmin(a.url('control'));
      await onA.put('/api/roles/staff', {});
      await onA.put('/api/routes/app', { upstream: up.origin, paths: ['/app'], rule: { roles: ['staff'] } });
      for (let round = 0; round < 5; round++) {
        // Minted on A and used at once on B; revoked on A and refused at once on B.
        const minted = await onA.post('/api/tokens', { name: `app-${round}`, kind: 'personal', account: 'root' });
        assert.equal(minted.status, 201, minted.text);
        const bearer = { authorization: `Bearer ${minted.json.token}` };
        const used = await call(`${b.url('data')}/app/x`, { headers: bearer });
        assert.notEqual(used.status, 401, `round ${round}: a token minted on A is known to B when A answers: ${used.text}`);
        assert.equal((await onA.del(`/api/tokens/${minted.json.id}`)).status, 204);
        const refused = await call(`${b.url('data')}/app/x`, { headers: bearer });
        assert.equal(refused.status, 401, `round ${round}: revoked on A, refused by B the moment A answered`);
      }
      // A console session: made on A, it opens B at once; ended on B, it opens nothing on A.
      const session = await signInAdmin(a.url('control'));
      const cookie = { cookie: session.headers.cookie! };
      assert.equal((await call(`${b.url('control')}/api/session`, { headers: cookie })).status, 200);
      assert.equal((await call(`${b.url('control')}/api/session`, { method: 'DELETE', headers: { ...cookie, origin: b.url('control') } })).status, 204);
      assert.equal((await call(`${a.url('control')}/api/session`, { headers: cookie })).status, 401);
    });
  } finally {
    await up.close();
  }
});

test('a node that stopped is not waited for: writes go on at once', cluster, async () => {
  // b stops half-way; closing it again after is a no-op (a gateway's stop is made once).
  await twoNodes(async (a, b) => {
    const onA = await signInAdmin(a.url('control'));
    await b.gw.stop();
    assert.equal((await onA.put('/api/roles/after-stop', {})).status, 201);
    // A node still counted would hold the write until the wait gives up, and say so.
    assert.ok(!a.logs.some((l) => l.msg === 'a config change is answered before every node serves it'), 'a clean stop says the node is gone');
  });
});

test('a certificate made on one node is read and placed at once through another', cluster, async () => {
  await twoNodes(async (a, b) => {
    const onA = await signInAdmin(a.url('control'));
    const onB = await signInAdmin(b.url('control'));
    for (let round = 0; round < 5; round++) {
      const made = await onA.post('/api/certificates', { source: 'self-signed', names: [`r${round}.cluster.test`] });
      assert.equal(made.status, 201, made.text);
      // Answered once every node holds it: B's own view has it already.
      assert.equal((await onB.get(`/api/certificates/${made.json.id}`)).status, 200, `round ${round}: read through B`);
      const placed = await onB.put(`/api/certificates/${made.json.id}/placement`, { planes: [] });
      assert.equal(placed.status, 200, `round ${round}: ${placed.text}`);
    }
    assert.equal((await onB.put('/api/certificates/crt_nowhere/placement', { planes: [] })).status, 404);
  });
});

test('a second node under a name another node holds is refused at start; the name is free once that node stops', cluster, async () => {
  const a = await startTestGateway({ GATEWAY_NODE_NAME: 'node-twin' });
  let again: TestGateway | undefined;
  let aRuns = true;
  try {
    await assert.rejects(startTestGateway({ GATEWAY_NODE_NAME: 'node-twin' }, a.db), (err: Error) => {
      assert.equal(err.name, 'SettingsError');
      assert.match(err.message, /Another gateway runs on this database under the node name "node-twin": give each node its own GATEWAY_NODE_NAME/);
      return true;
    });
    // Another name on the same database starts as ever.
    const other = await startTestGateway({ GATEWAY_NODE_NAME: 'node-other' }, a.db);
    await other.gw.stop();
    // The session holding the name is gone with the node: its restart is not held up.
    await a.gw.stop();
    aRuns = false;
    again = await startTestGateway({ GATEWAY_NODE_NAME: 'node-twin' }, a.db);
    assert.equal((await call(`${again.url('control')}/healthz`)).status, 200);
  } finally {
    await again?.gw.stop();
    if (aRuns) await a.gw.stop();
    await a.db.drop();
  }
});
