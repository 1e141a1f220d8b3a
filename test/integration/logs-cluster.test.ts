/**
 * The log settings across a cluster (spec 1.4 rules 3-4, 8): two nodes on one PostgreSQL database.
 * A level set on one node applies at once on the other, through the change bus, and its 30
 * minutes run on each node's own clock; the access log switch is live on every node; the other
 * node's live feed hears the level move. The tests run in order on the same two nodes.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { openLive } from '../helpers/live.ts';
import { createTestDatabase, TEST_DATABASE, type TestDatabase } from '../helpers/db.ts';
import { quietOutputs, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { signInAdmin, type Admin } from '../helpers/admin.ts';
import { call } from '../helpers/http.ts';
import { until } from '../helpers/until.ts';

/** Several nodes on one database is the PostgreSQL (cluster) mode: on SQLite these report as skipped. */
const cluster = { skip: TEST_DATABASE === 'postgres' ? false : 'several nodes share one PostgreSQL database; the SQLite file serves one node' };

const HALF_HOUR_MS = 30 * 60 * 1000;

type Json = Record<string, any>;


async function settings(admin: Admin): Promise<Json> {
  const a = await admin.get('/api/settings/logs');
  assert.equal(a.status, 200, a.text);
  return a.json as Json;
}

async function putSettings(admin: Admin, body: Json): Promise<Json> {
  const a = await admin.put('/api/settings/logs', body);
  assert.equal(a.status, 200, a.text);
  return a.json as Json;
}

/** The live feed of the operational log, its hello taken. */
interface Feed {
  readonly hello: Json;
  next(pred: (m: Json) => boolean, what: string): Promise<Json>;
  close(): Promise<void>;
}

async function openFeed(control: string, token: string): Promise<Feed> {
  const feed = openLive(control, '/api/logs/live', { authorization: `Bearer ${token}` });
  const hello = await feed.next((m) => m.type === 'hello', 'hello');
  return { hello, next: feed.next, close: feed.close };
}

describe('log settings across two nodes on one database', cluster, () => {
  let db: TestDatabase;
  let a: TestGateway;
  let b: TestGateway;
  let rootA: Admin;
  let rootB: Admin;
  let feed: Feed;
  /** Node A's standard output: a file the test reads. */
  let outDir: string;
  let outFd: number;

  before(async () => {
    db = await createTestDatabase();
    outDir = mkdtempSync(join(tmpdir(), 'meerkat-logs-'));
    outFd = openSync(join(outDir, 'a-stdout.log'), 'w');
    // Both on the test clock, at info: only B's is moved, and the level's 30 minutes run on each node's own.
    const env = { GATEWAY_LOG_LEVEL: 'info', GATEWAY_LOG_FORMAT: 'json', GATEWAY_CLOCK: 'manual' };
    a = await startTestGateway({ ...env, GATEWAY_NODE_NAME: 'node-a' }, db, { outputs: { ...quietOutputs(), stdoutFd: outFd } });
    b = await startTestGateway({ ...env, GATEWAY_NODE_NAME: 'node-b' }, db);
    // A test clock starts at its node's start and stands still, and a node follows only a level set
    // after it started (a restart returns to GATEWAY_LOG_LEVEL): A's clock is brought to B's.
    const behind = b.gw.ctx.clock.now() - a.gw.ctx.clock.now();
    assert.ok(behind >= 0);
    await a.gw.ctx.advanceClock!(behind);
    assert.equal(a.gw.ctx.clock.now(), b.gw.ctx.clock.now());
    rootA = await signInAdmin(a.url('control'));
    rootB = await signInAdmin(b.url('control'));
    const minted = await rootB.post('/api/tokens', { name: 'log-reader', kind: 'admin' });
    assert.equal(minted.status, 201, minted.text);
    feed = await openFeed(b.url('control'), minted.json.token as string);
  });
  after(async () => {
    await feed?.close();
    await b?.close();
    await a?.close();
    if (outFd !== undefined) closeSync(outFd);
    if (outDir) rmSync(outDir, { recursive: true, force: true });
    await db?.drop();
  });

  test('both nodes start at info; the live feed opens with the level in force', async () => {
    for (const [node, admin] of [['node-a', rootA], ['node-b', rootB]] as const) {
      const s = await settings(admin);
      assert.deepEqual({ node: s.node, level: s.level, startupLevel: s.startupLevel, revertsAt: s.revertsAt, accessLog: s.accessLog }, {
        node, level: 'info', startupLevel: 'info', revertsAt: null, accessLog: false,
      });
    }
    assert.deepEqual({ node: feed.hello.node, level: feed.hello.level, revertsAt: feed.hello.revertsAt }, { node: 'node-b', level: 'info', revertsAt: null });
  });

  test('debug set on node A applies on node B through the change bus, with the same countdown; B keeps its debug records', async () => {
    const marker = randomBytes(6).toString('hex');
    b.gw.ctx.log.debug(`before-${marker}`);
    const set = await putSettings(rootA, { level: 'debug' });
    assert.equal(set.level, 'debug');
    assert.equal(set.revertsAt, Math.floor((a.gw.ctx.clock.now() + HALF_HOUR_MS) / 1000), 'A reverts 30 minutes after the change');

    const onB = await until(async () => {
      const s = await settings(rootB);
      return s.level === 'debug' ? s : undefined;
    }, 'node B at debug');
    assert.equal(onB.node, 'node-b');
    assert.equal(onB.startupLevel, 'info');
    assert.equal(onB.revertsAt, set.revertsAt, 'the same 30 minutes: dated by the change, not by its arrival');
    assert.equal(b.gw.ctx.hub.level, 'debug');
    const heard = await feed.next((m) => m.type === 'level' && m.level === 'debug', 'level debug on B\'s feed');
    assert.deepEqual(heard, { type: 'level', level: 'debug', startupLevel: 'info', revertsAt: set.revertsAt });

    b.gw.ctx.log.debug(`after-${marker}`);
    const lines = (await rootB.get(`/api/logs?q=${marker}`)).json as Json;
    assert.equal(lines.node, 'node-b');
    assert.deepEqual(lines.lines.map((l: Json) => [l.message, l.level, l.node]), [[`after-${marker}`, 'debug', 'node-b']],
      'the debug record emitted at debug is kept, the one emitted at info was not');
    const said = ((await rootB.get('/api/logs?q=operational%20log%20level%20set')).json as Json).lines as Json[];
    assert.ok(said.some((l) => l.level === 'info' && l.attrs.to === 'debug' && l.attrs.by === 'account:root'), 'B says who set the level');
    assert.deepEqual(((await rootA.get(`/api/logs?q=${marker}`)).json as Json).lines, [], 'each node keeps its own lines');
  });

  test('the access log switched on on node B is on on node A, and A writes access lines', async () => {
    const on = await putSettings(rootB, { accessLog: true });
    assert.equal(on.accessLog, true);
    const onA = await until(async () => {
      const s = await settings(rootA);
      return s.accessLog === true ? s : undefined;
    }, 'the access log on on node A');
    assert.equal(onA.node, 'node-a');
    assert.equal(a.gw.ctx.logs.accessOn, true);
    const path = `/nowhere/${randomBytes(6).toString('hex')}`;
    assert.equal((await call(`${a.url('data')}${path}`)).status, 404);
    const line = await until(() => readFileSync(join(outDir, 'a-stdout.log'), 'utf8').split('\n').find((l) => l.includes(`"path":"${path}"`)), 'A\'s access line');
    assert.deepEqual({ ...JSON.parse(line), time: 0, ms: 0 }, {
      time: 0, type: 'access', method: 'GET', path, status: 404, ms: 0, outcome: 'refused', ip: '127.0.0.1', plane: 'data',
    });
  });

  test('30 minutes on node B\'s clock: B returns to info; A, whose clock stood still, is still at debug', async () => {
    const before = await settings(rootB);
    await b.gw.ctx.advanceClock!(HALF_HOUR_MS - 1000);
    assert.equal((await settings(rootB)).level, 'debug', 'not a second early');
    await b.gw.ctx.advanceClock!(1000);
    const after = await settings(rootB);
    assert.equal(after.level, 'info');
    assert.equal(after.revertsAt, null);
    assert.equal(b.gw.ctx.hub.level, 'info');
    assert.ok(before.revertsAt * 1000 <= b.gw.ctx.clock.now());
    const heard = await feed.next((m) => m.type === 'level', 'the return to info on B\'s feed');
    assert.deepEqual(heard, { type: 'level', level: 'info', startupLevel: 'info', revertsAt: null });
    const returned = ((await rootB.get('/api/logs?q=returned%20to%20its%20startup%20level')).json as Json).lines as Json[];
    assert.equal(returned.length, 1, 'B says it returned');

    const onA = await settings(rootA);
    assert.equal(onA.level, 'debug');
    assert.equal(onA.revertsAt, before.revertsAt);
    assert.equal(a.gw.ctx.hub.level, 'debug');
  });

  test('node B\'s live feed hears the level node A sets next', async () => {
    const set = await putSettings(rootA, { level: 'warn' });
    assert.equal(set.level, 'warn');
    assert.equal(set.revertsAt, null, 'less talkative than the startup level: no countdown');
    const heard = await feed.next((m) => m.type === 'level', 'level warn on B\'s feed');
    assert.deepEqual(heard, { type: 'level', level: 'warn', startupLevel: 'info', revertsAt: null });
    assert.equal(b.gw.ctx.hub.level, 'warn');
    // Turning the level down does not silence the access log (spec 1.4 rule 4).
    assert.equal((await settings(rootB)).accessLog, true);
    assert.equal(b.gw.ctx.logs.accessOn, true);
  });
});
