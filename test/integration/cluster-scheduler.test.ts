import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createTestDatabase, TEST_DATABASE } from '../helpers/db.ts';
import { loopbackEnv } from '../helpers/gateway.ts';
import { call } from '../helpers/http.ts';
import { startProcess, type GatewayProcess } from '../helpers/process.ts';
import { signInAdmin } from '../helpers/admin.ts';
import { startUpstream } from '../helpers/upstream.ts';
import { WebSocket } from 'undici';

/** Several nodes on one database is the PostgreSQL (cluster) mode: on SQLite these report as skipped. */
const cluster = { skip: TEST_DATABASE === 'postgres' ? false : 'several nodes share one PostgreSQL database; the SQLite file serves one node' };

/**
 * Waits until a node's snapshot holds the route: its data plane then refuses an anonymous
 * request with 401 instead of 404 (the route is protected, nothing reaches the service).
 */
async function knowsRoute(node: GatewayProcess, path: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if ((await call(`${node.urls.data}${path}`)).status === 401) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.fail(`${node.urls.data} did not learn the route of ${path}`);
}

/** Moves every node's test clock to the same instant, then `bySeconds` further. */
async function advanceAll(nodes: GatewayProcess[], bySeconds: number): Promise<void> {
  const nows = await Promise.all(nodes.map(async (n) => (await call(`${n.urls.control}/__clock`)).json.now as number));
  const target = Math.max(...nows);
  await Promise.all(nodes.map((n, i) => call(`${n.urls.control}/__clock/advance`, {
    method: 'POST', body: { by: `PT${Math.ceil((target - nows[i]!) / 1000) + bySeconds}S` },
  })));
}

// Several nodes on one database is the PostgreSQL (cluster) mode.
{
  test('three gateway processes on one database: every turn goes out exactly once', cluster, async () => {
    const db = await createTestDatabase();
    const up = await startUpstream();
    const nodes: GatewayProcess[] = [];
    try {
      const env = loopbackEnv({
        GATEWAY_DATA_DIR: db.dataDir, GATEWAY_DATABASE_URL: db.databaseUrl!, GATEWAY_CLOCK: 'manual',
        GATEWAY_VAULT_KEY: randomBytes(32).toString('base64'),
      });
      // One node first (it migrates), then two more.
      nodes.push(await startProcess({ ...env, GATEWAY_NODE_NAME: 'node-1' }));
      nodes.push(...await Promise.all([2, 3].map((n) => startProcess({ ...env, GATEWAY_NODE_NAME: `node-${n}` }))));
      const root = await signInAdmin(nodes[0]!.urls.control!);
      await root.put('/api/roles/jobs', {});
      await root.put('/api/routes/billing', { upstream: up.origin, paths: ['/billing'], rule: { roles: ['jobs'] } });
      const token = (await root.post('/api/tokens', { name: 'billing-svc', kind: 'schedules', routes: ['billing'], roles: ['jobs'] })).json.token as string;
      // The route is changed after the token, so a node that knows its new path knows the token too.
      await root.put('/api/routes/billing', { upstream: up.origin, paths: ['/billing', '/billing-v2'], rule: { roles: ['jobs'] } });
      for (const node of nodes) await knowsRoute(node, '/billing-v2/x');
      // Every node learns the route through the shared database.
      for (const node of nodes) await knowsRoute(node, '/billing/x');
      const SCHEDULES = 12;
      const ids: string[] = [];
      for (let i = 0; i < SCHEDULES; i++) {
        const node = nodes[i % nodes.length]!;
        const c = await call(`${node.urls.internal}/api/schedules`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: { routeId: 'billing', path: `/billing/${i}`, every: 'PT1M', roles: ['jobs'] } });
        assert.equal(c.status, 201, c.text);
        ids.push(c.json.id);
      }
      const callsPerSchedule = (): Map<string, number> => {
        const calls = new Map<string, number>();
        for (const r of up.requests) calls.set(String(r.headers['gateway-job']), (calls.get(String(r.headers['gateway-job'])) ?? 0) + 1);
        return calls;
      };
      for (let round = 1; round <= 3; round++) {
        await advanceAll(nodes, 61);
        const want = SCHEDULES * round;
        for (let i = 0; i < 1200 && up.requests.length < want; i++) await new Promise((r) => setTimeout(r, 25));
        if (up.requests.length !== want) {
          // Say which turn is missing and what the nodes said of it, so that a late turn and a lost one can be told apart.
          const calls = callsPerSchedule();
          const short = ids.filter((id) => (calls.get(id) ?? 0) < round);
          const said = nodes.map((n, i) => `node-${i + 1}:\n${n.stderr().split('\n').filter((l) => /"level":"(warn|error)"/.test(l) || short.some((id) => l.includes(id))).slice(-40).join('\n')}`);
          assert.fail(`round ${round}: ${up.requests.length} of ${want} turns went out; short of a turn: ${short.join(', ')}\n${said.join('\n')}`);
        }
        // Let any duplicate that would come arrive before counting.
        await new Promise((r) => setTimeout(r, 300));
        const perSchedule = callsPerSchedule();
        for (const id of ids) assert.equal(perSchedule.get(id), round, `${id}: exactly one call per turn`);
        assert.equal(new Set(up.requests.map((r) => r.headers['gateway-job-run'])).size, up.requests.length, 'no run went out twice');
      }
      const nodesSeen = new Set<string>();
      for (const id of ids) {
        // The last answers may still be on their way into the history.
        let history: Array<{ state: string; node: string }> = [];
        for (let i = 0; i < 200 && history.length < 3; i++) {
          history = (await call(`${nodes[0]!.urls.internal}/api/schedules/${id}/runs`, { headers: { authorization: `Bearer ${token}` } })).json;
          if (history.length < 3) await new Promise((r) => setTimeout(r, 25));
        }
        assert.equal(history.length, 3);
        for (const h of history) {
          assert.equal(h.state, 'done');
          nodesSeen.add(h.node);
        }
      }
      assert.ok(nodesSeen.size >= 2, `calls spread over the nodes (${[...nodesSeen].join(', ')})`);
    } finally {
      for (const n of nodes) n.child.kill('SIGTERM');
      for (const n of nodes) await n.exited;
      await up.close();
      await db.drop();
    }
  });
}

/**
 * Two gateway processes on a fresh database, an upstream that holds every answer until released,
 * a protected route both nodes know, and a schedules token.
 */
async function twoNodes() {
  const db = await createTestDatabase();
  const held: Array<() => void> = [];
  const up = await startUpstream((_req, res) => { held.push(() => { res.writeHead(200); res.end('ok'); }); });
  const env = loopbackEnv({
    GATEWAY_DATA_DIR: db.dataDir, GATEWAY_DATABASE_URL: db.databaseUrl!, GATEWAY_CLOCK: 'manual',
    GATEWAY_VAULT_KEY: randomBytes(32).toString('base64'),
  });
  const nodes: GatewayProcess[] = [];
  nodes.push(await startProcess({ ...env, GATEWAY_NODE_NAME: 'node-a' }));
  nodes.push(await startProcess({ ...env, GATEWAY_NODE_NAME: 'node-b' }));
  const root = await signInAdmin(nodes[0]!.urls.control!);
  await root.put('/api/roles/jobs', {});
  await root.put('/api/routes/billing', { upstream: up.origin, paths: ['/billing'], rule: { roles: ['jobs'] } });
  const token = (await root.post('/api/tokens', { name: 'svc', kind: 'schedules', routes: ['billing'], roles: ['jobs'] })).json.token as string;
  // Changed after the token: a node that knows the new path knows the token too.
  await root.put('/api/routes/billing', { upstream: up.origin, paths: ['/billing', '/billing-v2'], rule: { roles: ['jobs'] } });
  for (const node of nodes) await knowsRoute(node, '/billing-v2/x');
  return { db, held, up, nodes, root, auth: { authorization: `Bearer ${token}` } };
}

/** The scheduler feed of one node, read until a message matches. */
async function feedOf(control: string, headers: Record<string, string>) {
  const ws = new WebSocket(`${control.replace(/^http/, 'ws')}/api/schedules/live`, { headers });
  const messages: Array<Record<string, any>> = [];
  ws.addEventListener('message', (e) => { messages.push(JSON.parse(String(e.data))); });
  const next = async (pred: (m: Record<string, any>) => boolean, what: string) => {
    for (let i = 0; i < 400; i++) {
      const m = messages.find(pred);
      if (m) return m;
      await new Promise((r) => setTimeout(r, 25));
    }
    assert.fail(`no ${what}; got ${messages.map((m) => m.type).join(', ')}`);
  };
  await next((m) => m.type === 'hello', 'hello');
  return { next, close: () => ws.close() };
}

{
  test('the scheduler feed crosses the cluster: a console on one node sees what another node did', cluster, async () => {
    const { db, held, up, nodes, root, auth } = await twoNodes();
    try {
      const feed = await feedOf(nodes[0]!.urls.control!, root.headers);
      // Written through node b: node a's feed hears of it over NOTIFY.
      const s = (await call(`${nodes[1]!.urls.internal}/api/schedules`, { method: 'POST', headers: auth, body: { routeId: 'billing', path: '/billing/feed', every: 'PT1M', roles: ['jobs'] } })).json;
      assert.ok(s.id, JSON.stringify(s));
      const changed = await feed.next((m) => m.type === 'schedule.changed' && m.schedule?.id === s.id, 'schedule.changed from node b');
      assert.equal(changed.schedule.routeId, 'billing');
      await advanceAll(nodes, 61);
      const started = await feed.next((m) => m.type === 'run.started' && m.scheduleId === s.id, 'run.started');
      assert.ok(['node-a', 'node-b'].includes(started.node));
      for (let i = 0; i < 200 && held.length < 1; i++) await new Promise((r) => setTimeout(r, 25));
      for (const release of held.splice(0)) release();
      const finished = await feed.next((m) => m.type === 'run.finished' && m.scheduleId === s.id, 'run.finished');
      assert.equal(finished.run.runId, started.runId);
      assert.equal(finished.run.state, 'done');
      assert.equal(finished.run.node, started.node);
      // Deleted through node b.
      assert.equal((await call(`${nodes[1]!.urls.internal}/api/schedules/${s.id}`, { method: 'DELETE', headers: auth })).status, 204);
      await feed.next((m) => m.type === 'schedule.deleted' && m.scheduleId === s.id, 'schedule.deleted from node b');
      feed.close();
    } finally {
      for (const release of held.splice(0)) release();
      for (const n of nodes) { n.child.kill('SIGTERM'); await n.exited; }
      await up.close();
      await db.drop();
    }
  });

  test('SIGTERM hands a call in flight over: another node sends it again at once, same run id, attempt 2', cluster, async () => {
    const { db, held, up, nodes, auth } = await twoNodes();
    try {
      const s = (await call(`${nodes[0]!.urls.internal}/api/schedules`, { method: 'POST', headers: auth, body: { routeId: 'billing', path: '/billing/hand-over', every: 'PT1M', roles: ['jobs'] } })).json;
      await advanceAll(nodes, 61);
      for (let i = 0; i < 200 && up.requests.length < 1; i++) await new Promise((r) => setTimeout(r, 25));
      assert.equal(up.requests.length, 1);
      const first = up.requests[0]!;
      assert.equal(first.headers['gateway-job-attempt'], '1');
      const flight = (await call(`${nodes[0]!.urls.internal}/api/schedules/${s.id}`, { headers: auth })).json.inFlight;
      const caller = nodes.find((n) => n === nodes[flight.node === 'node-a' ? 0 : 1])!;
      const survivor = nodes.find((n) => n !== caller)!;

      caller.child.kill('SIGTERM');
      assert.equal(await caller.exited, 0, 'a clean stop');
      // No clock moves: the hand-over alone makes the other node send it again.
      for (let i = 0; i < 200 && up.requests.length < 2; i++) await new Promise((r) => setTimeout(r, 25));
      assert.equal(up.requests.length, 2, 'sent again at once by the other node');
      const second = up.requests[1]!;
      assert.equal(second.headers['gateway-job-run'], first.headers['gateway-job-run'], 'the same run identifier');
      assert.equal(second.headers['gateway-job-attempt'], '2');
      for (const release of held.splice(0)) release();
      let history: Array<Record<string, any>> = [];
      for (let i = 0; i < 200 && history.length === 0; i++) {
        // The survivor may still be learning the token (its snapshot follows the database within a second).
        const r = await call(`${survivor.urls.internal}/api/schedules/${s.id}/runs`, { headers: auth });
        history = r.status === 200 ? r.json : [];
        if (history.length === 0) await new Promise((r) => setTimeout(r, 25));
      }
      assert.equal(history.length, 1);
      assert.equal(history[0]!.state, 'done');
      assert.equal(history[0]!.attempt, 2);
      assert.equal(history[0]!.node, flight.node === 'node-a' ? 'node-b' : 'node-a');
      // The lost attempt stays in the run's history, naming the node that made it.
      const attempts = history[0]!.attempts as Array<{ attempt: number; status: number | null; detail: string }>;
      assert.deepEqual(attempts.map((a) => [a.attempt, a.status]), [[1, null], [2, 200]], JSON.stringify(attempts));
      assert.match(attempts[0]!.detail, new RegExp(`The gateway ${flight.node} stopped cleanly before the answer and handed the call over; sent again by node-`));
    } finally {
      for (const release of held.splice(0)) release();
      for (const n of nodes) { n.child.kill('SIGTERM'); await n.exited; }
      await up.close();
      await db.drop();
    }
  });

  test('SIGKILL: the dead node\'s call is sent again when its lease runs out (five minutes)', cluster, async () => {
    const { db, held, up, nodes, auth } = await twoNodes();
    try {
      const s = (await call(`${nodes[0]!.urls.internal}/api/schedules`, { method: 'POST', headers: auth, body: { routeId: 'billing', path: '/billing/kill', every: 'PT1H', roles: ['jobs'] } })).json;
      await advanceAll(nodes, 3601);
      for (let i = 0; i < 200 && up.requests.length < 1; i++) await new Promise((r) => setTimeout(r, 25));
      const flight = (await call(`${nodes[0]!.urls.internal}/api/schedules/${s.id}`, { headers: auth })).json.inFlight;
      const dead = nodes[flight.node === 'node-a' ? 0 : 1]!;
      const survivor = nodes[flight.node === 'node-a' ? 1 : 0]!;
      dead.child.kill('SIGKILL');
      await dead.exited;
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(up.requests.length, 1, 'nothing is sent before the lease runs out');
      await advanceAll([survivor], 4 * 60);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(up.requests.length, 1, 'still nothing after four minutes');
      await advanceAll([survivor], 61);
      for (let i = 0; i < 200 && up.requests.length < 2; i++) await new Promise((r) => setTimeout(r, 25));
      assert.equal(up.requests.length, 2);
      assert.equal(up.requests[1]!.headers['gateway-job-run'], up.requests[0]!.headers['gateway-job-run']);
      assert.equal(up.requests[1]!.headers['gateway-job-attempt'], '2');
    } finally {
      for (const release of held.splice(0)) release();
      for (const n of nodes) { n.child.kill('SIGTERM'); await n.exited; }
      await up.close();
      await db.drop();
    }
  });
}
