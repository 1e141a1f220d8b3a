/**
 * The traffic metrics of a cluster (spec 1.5 rule 6; CONTRACT.md "Metrics"): real nodes in this
 * process on one PostgreSQL database, each on its own test clock, in front of a real upstream.
 * Each node writes its summary on its own 5-s tick; any node sums them: the curves point by point
 * with the number of nodes each point covers, the minute's counts, and its percentiles from the
 * merged histograms. An endpoint is counted by the node that answered it; any node lists the sum. A restarted node covers
 * nothing before its new start; a node gone for good keeps its points for the hour and leaves the
 * minute (and from the nodes that answer now) once its summary is older than 15 s. The live feed sums the nodes that have written.
 *
 * The clocks move in lockstep: once aligned (1 s into an interval), every node ticks at the same
 * instants, so a summary read was always written at the reader's now. A node's test clock starts
 * at the wall clock: the third node starts (and restarts) once the wall clock is past the
 * cluster's now, as in a cluster whose clocks agree. The expected numbers come from what each
 * test sent, interval by interval (`Life`), never from the gateway's answers.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import pg from 'pg';
import { createTestDatabase, TEST_DATABASE, type TestDatabase } from '../helpers/db.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { adminWith, putOk, signInAdmin, type Admin } from '../helpers/admin.ts';
import { call } from '../helpers/http.ts';
import { closedPort, startUpstream, type Upstream } from '../helpers/upstream.ts';
import type { ClusterMetrics } from '../../src/core/metrics/wire.ts';
import type { MetricsInput } from '../../src/actors/metrics/messages.ts';
import { until } from '../helpers/until.ts';

/** Several nodes on one database is the PostgreSQL (cluster) mode: on SQLite these report as skipped. */
const cluster = { skip: TEST_DATABASE === 'postgres' ? false : 'several nodes share one PostgreSQL database; the SQLite file serves one node' };

const STEP_MS = 5_000;
const POINTS = 720;
const MINUTE_INTERVALS = 12;
/** node-rows.ts: a summary older than this leaves the minute's numbers. */
const FRESH_MS = 15_000;
const HOUR_MS = 3_600_000;
const WAIT_MS = 10_000;

type Json = Record<string, any>;
interface Count { answered: number; failed: number }

/** One life of a node's ring: where it starts and what the test sent it, per interval and route. */
interface Life {
  readonly node: string;
  /** The interval the ring started in (the node's clock at start). */
  readonly from: number;
  readonly counts: Map<number, Map<string, Count>>;
}

/** A life as a reader sums it: its summary taken at `at` (its last write, or now for the reader's own ring). */
interface Seen { readonly life: Life; readonly at: number }

interface Node {
  readonly name: string;
  readonly t: TestGateway;
  readonly life: Life;
  /** Intervals this node closed, as its ring told the main thread. */
  readonly ticks: ClusterMetrics[];
  /** What the node handed its ring: the durations it measured. */
  readonly told: MetricsInput[];
  readonly unfollow: () => void;
  now(): number;
}


/** A node on the test clock, started at `startAt` (epoch ms) when given, else at the wall clock. */
async function startNode(db: TestDatabase, name: string, startAt?: number): Promise<Node> {
  const env: Record<string, string> = { GATEWAY_CLOCK: 'manual', GATEWAY_NODE_NAME: name };
  if (startAt !== undefined) env.GATEWAY_CLOCK_START = String(startAt);
  const t = await startTestGateway(env, db);
  const metrics = t.gw.ctx.metrics;
  // The test clock stands still from the start: the ring started at this instant.
  const start = t.gw.ctx.clock.now();
  const ticks: ClusterMetrics[] = [];
  const told: MetricsInput[] = [];
  // The node's own measure of each exchange, to compute the exact percentiles over all of them;
  // the record still goes to the ring as it would.
  const record = metrics.record.bind(metrics);
  metrics.record = (route, method, path, outcome, us, at) => {
    told.push({ route, method, path, outcome, us, at });
    return record(route, method, path, outcome, us, at);
  };
  return {
    name, t, ticks, told,
    life: { node: name, from: Math.floor(start / STEP_MS), counts: new Map() },
    unfollow: metrics.follow((m) => ticks.push(m)),
    now: () => t.gw.ctx.clock.now(),
  };
}

/** Moves a node's test clock by `ms` and waits for the interval its ring closes on the way (its summary is written by then). */
async function moveAndTick(node: Node, ms: number): Promise<void> {
  const before = node.ticks.length;
  await node.t.gw.ctx.advanceClock!(ms);
  await until(() => (node.ticks.length > before ? true : undefined), `${node.name} closing an interval`);
}

/**
 * One step of the test clock on each node, in this order, through POST /__clock/advance: each
 * closes one interval on its tick (a move longer than two intervals still ticks once, 5 s after
 * the last tick, and arms the next 5 s after the end of the move).
 */
async function step(nodes: readonly Node[], admin: (n: Node) => Admin, by = 'PT5S'): Promise<void> {
  for (const node of nodes) {
    const before = node.ticks.length;
    const a = await call(`${node.t.url('control')}/__clock/advance`, { method: 'POST', body: { by }, headers: admin(node).headers });
    assert.equal(a.status, 200, a.text);
    await until(() => (node.ticks.length > before ? true : undefined), `${node.name} closing an interval`);
  }
}

/**
 * Brings every node to the same instant, 1 s into a clock minute's first interval and more than
 * an interval past each one's first tick (its start + 5 s): each closes one interval on the way
 * and, behind by a whole interval, arms its next tick 5 s after the move, so from here on the
 * nodes tick together. The tests start at the same place in a minute whatever the wall clock
 * said: the first two count on their intervals sharing one clock minute.
 */
async function align(nodes: readonly Node[], admin: (n: Node) => Admin): Promise<void> {
  const latest = Math.max(...nodes.map((n) => n.now()));
  const target = Math.ceil((latest + 2 * STEP_MS) / 60_000) * 60_000 + 1000;
  for (const node of nodes) await moveAndTick(node, target - node.now());
  // One tick together: from here every summary was written at its reader's now.
  await step(nodes, admin);
  for (const node of nodes) assert.equal(node.now(), target + STEP_MS);
}

/** Lets each ring take what the requests told it: a call goes after the records told before it. */
async function settle(nodes: readonly Node[]): Promise<void> {
  for (const n of nodes) await n.t.gw.ctx.metrics.call('metrics.route', { id: 'shop' });
}

/** `times` requests to `path` on a node's data plane, one after the other; counted in the interval of the node's clock. */
async function send(node: Node, path: string, times = 1): Promise<void> {
  const route = path.split('/')[1]!;
  const failed = route === 'down';
  const n = Math.floor(node.now() / STEP_MS);
  for (let i = 0; i < times; i++) {
    const a = await call(`${node.t.url('data')}${path}`);
    if (failed) assert.ok(a.status >= 500, `${path}: ${a.status}`);
    else assert.equal(a.status, 200, `${path}: ${a.text}`);
  }
  let routes = node.life.counts.get(n);
  if (routes === undefined) node.life.counts.set(n, (routes = new Map()));
  const c = routes.get(route) ?? { answered: 0, failed: 0 };
  routes.set(route, { answered: c.answered + times, failed: c.failed + (failed ? times : 0) });
}

/** The summaries in the database: node -> updated_at. */
/** The history points a node wrote (metrics_history): [route, template, t, requests]. */
async function historyRows(db: TestDatabase, node: string): Promise<Array<[string, string, number, number]>> {
  const client = new pg.Client({ connectionString: db.databaseUrl });
  await client.connect();
  try {
    const r = await client.query('select route, template, t, requests from metrics_history where node = $1 order by t, route, template', [node]);
    return r.rows.map((x: { route: string; template: string; t: string; requests: number }) => [x.route, x.template, Number(x.t), x.requests]);
  } finally {
    await client.end();
  }
}

async function rows(db: TestDatabase): Promise<Map<string, number>> {
  const client = new pg.Client({ connectionString: db.databaseUrl });
  await client.connect();
  try {
    const r = await client.query('select node, updated_at from metrics_nodes order by node');
    return new Map(r.rows.map((x: { node: string; updated_at: string }) => [x.node, Number(x.updated_at)]));
  } finally {
    await client.end();
  }
}

/** What a reader at `now` must show, summing the lives it sees. */
function expected(now: number, seen: readonly Seen[]) {
  const open = Math.floor(now / STEP_MS);
  const points: { t: number; answered: number; failed: number; nodes: number }[] = [];
  for (let n = open - POINTS; n < open; n++) {
    const p = { t: n * 5, answered: 0, failed: 0, nodes: 0 };
    for (const { life, at } of seen) {
      // A summary covers the closed intervals from the ring's start to its write, an hour at most.
      const end = Math.floor(at / STEP_MS);
      if (n < life.from || n >= end || n < end - POINTS) continue;
      p.nodes++;
      for (const c of life.counts.get(n)?.values() ?? []) {
        p.answered += c.answered;
        p.failed += c.failed;
      }
    }
    points.push(p);
  }
  const minute = { requests: 0, failed: 0 };
  const routes = new Map<string, { requests: number; failed: number }>();
  for (const { life, at } of seen) {
    if (now - at > FRESH_MS) continue;
    const end = Math.floor(at / STEP_MS);
    for (let n = Math.max(life.from, end - MINUTE_INTERVALS); n < end; n++) {
      for (const [route, c] of life.counts.get(n) ?? []) {
        minute.requests += c.answered;
        minute.failed += c.failed;
        const r = routes.get(route) ?? { requests: 0, failed: 0 };
        routes.set(route, { requests: r.requests + c.answered, failed: r.failed + c.failed });
      }
    }
  }
  return { nodes: seen.filter(({ at }) => now - at <= FRESH_MS).length, points, minute, routes };
}

/** Asserts a snapshot against `expected`: every point, the minute's counts, the routes' counts. */
function assertSums(m: Json, exp: ReturnType<typeof expected>, what: string): void {
  assert.equal(m.nodes, exp.nodes, `${what}: nodes`);
  assert.equal(m.points.length, POINTS);
  const wrong = exp.points.flatMap((p, i) => (JSON.stringify(m.points[i]) === JSON.stringify(p) ? [] : [{ want: p, got: m.points[i] }]));
  assert.deepEqual(wrong.slice(0, 5), [], `${what}: ${wrong.length} points differ`);
  assert.deepEqual({ requests: m.minute.requests, failed: m.minute.failed }, exp.minute, `${what}: the minute`);
  assert.equal(m.minute.rps, Math.round((exp.minute.requests / 60) * 1000) / 1000, `${what}: rps`);
  const routes = Object.fromEntries(m.routes.map((r: Json) => [r.route, { requests: r.requests, failed: r.failed }]));
  assert.deepEqual(routes, Object.fromEntries(exp.routes), `${what}: the routes`);
}

/** The exact nearest-rank percentile of durations in µs, in ms: what an HDR histogram approximates. */
function exactMs(us: readonly number[], p: number): number {
  const sorted = [...us].sort((a, b) => a - b);
  return sorted[Math.ceil((p / 100) * sorted.length) - 1]! / 1000;
}

/** Two significant digits: the histogram's value is the top of the exact one's bucket, less than 1 % above it. */
function assertHdr(got: number, exact: number, what: string): void {
  assert.ok(got >= exact && got <= exact * 1.01, `${what}: ${got} ms for an exact ${exact} ms`);
}

/** GET /api/metrics; the routes sorted by id (each node lists its own ring's first). */
async function getMetrics(admin: Admin): Promise<Json> {
  const a = await admin.get('/api/metrics');
  assert.equal(a.status, 200, a.text);
  const m = a.json as Json;
  return { ...m, routes: [...m.routes].sort((x: Json, y: Json) => (x.route < y.route ? -1 : 1)) };
}

/** An upstream that answers /wait/<ms> after that many milliseconds, anything else at once. */
function delayed(): Promise<Upstream> {
  return startUpstream((req, res) => {
    const wait = /\/wait\/(\d+)/.exec(req.url ?? '');
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 2 });
      res.end('ok');
    }, wait ? Number(wait[1]) : 0);
  });
}

/** Routes (shop, echo, tail, down) and an admin token, written through the first node before the others start: they load them at start. */
async function configure(first: Node, up: Upstream): Promise<string> {
  const session = await signInAdmin(first.t.url('control'));
  await putOk(session, '/api/routes/shop', { upstream: up.origin, paths: ['/shop'], stripPrefix: true });
  await putOk(session, '/api/routes/echo', { upstream: up.origin, paths: ['/echo'], stripPrefix: true });
  await putOk(session, '/api/routes/tail', { upstream: up.origin, paths: ['/tail'], stripPrefix: true });
  await putOk(session, '/api/routes/down', { upstream: `http://127.0.0.1:${await closedPort()}`, paths: ['/down'] });
  const minted = await session.post('/api/tokens', { name: 'metrics-reader', kind: 'admin' });
  assert.equal(minted.status, 201, minted.text);
  return `Bearer ${minted.json.token as string}`;
}

describe('traffic metrics summed over the nodes on one database', cluster, () => {
  let db: TestDatabase;
  let up: Upstream;
  let a: Node;
  let b: Node;
  let c: Node | undefined;
  let token: string;
  const admin = (n: Node) => adminWith(n.t.url('control'), { authorization: token });
  const both = (): Seen[] => [{ life: a.life, at: a.now() }, { life: b.life, at: b.now() }];

  before(async () => {
    db = await createTestDatabase();
    up = await delayed();
    a = await startNode(db, 'node-a');
    token = await configure(a, up);
    b = await startNode(db, 'node-b');
    assert.ok(b.t.gw.ctx.config.view.routesById.has('down'), 'node B loaded the routes at start');
    await align([a, b], admin);
  });
  /**
   * A node just started joins the others' ticks: they step on until their now is more than an
   * interval past its first tick (its start + 5 s); it moves to their now in one go (one tick,
   * the next armed 5 s after the move, as in `align`); then all step together once.
   */
  const keepStep = async (node: Node, running: readonly Node[]) => {
    while (running[0]!.now() <= node.now() + 2 * STEP_MS) await step(running, admin);
    await moveAndTick(node, running[0]!.now() - node.now());
    await step([...running, node], admin);
  };
  /** A node joins with its clock past the cluster's now, as it would in a cluster whose clocks agree. */
  const joinCluster = async (name: string) => {
    const node = await startNode(db, name, a.now() + 1000);
    assert.ok(node.t.gw.ctx.config.view.routesById.has('tail'), `${name} loaded the routes at start`);
    await keepStep(node, [a, b]);
    return node;
  };

  after(async () => {
    for (const n of [c, b, a]) {
      n?.unfollow();
      await n?.t.close();
    }
    await up?.close();
    await db?.drop();
  });

  test('one interval answered by both nodes: its point, the minute and the routes are their sums; p95 from the merged histograms', async () => {
    const told = a.told.length + b.told.length;
    const interval = Math.floor(a.now() / STEP_MS);
    // Durations chosen so that neither node's own p95 is the cluster's: A's (21st of 22) is one
    // of its 10 ms, B's (19th of 20) one of its 500 ms, the cluster's (40th of 42) A's 200 ms.
    await send(a, '/down/x', 2);
    await send(a, '/shop/wait/10', 19);
    await send(a, '/shop/wait/200', 1);
    await send(b, '/down/x', 2);
    await send(b, '/shop/wait/80', 16);
    await send(b, '/shop/wait/500', 2);
    await settle([a, b]);
    const measured = [...a.told, ...b.told].slice(told);
    assert.equal(measured.length, 42);
    assert.ok(measured.every((r) => Math.floor(r.at / STEP_MS) === interval), 'every answer ended in the interval');

    // Each node closes the interval on its own tick and writes its summary; either reads both.
    await step([a, b], admin);
    const rowsNow = await rows(db);
    assert.deepEqual([...rowsNow], [['node-a', a.now()], ['node-b', b.now()]], 'each node wrote its summary at its tick');
    const onA = await getMetrics(admin(a));
    const onB = await getMetrics(admin(b));
    assertSums(onA, expected(a.now(), both()), 'on node A');
    assert.deepEqual(onB, onA, 'both nodes show the same sums');
    assert.deepEqual(onA.points.at(-1), { t: interval * 5, answered: 42, failed: 4, nodes: 2 });
    assert.deepEqual(onA.rankings.failing, ['down']);

    const us = measured.map((r) => r.us);
    assertHdr(onA.minute.p95, exactMs(us, 95), 'the minute\'s p95');
    assertHdr(onA.minute.p50, exactMs(us, 50), 'the minute\'s p50');
    // Three answers took 200 ms or more: the 40th of 42 did; 38 took 10 ms or more.
    assert.ok(onA.minute.p95 >= 200 && onA.minute.p50 >= 10 && onA.minute.p95 >= onA.minute.p50, JSON.stringify(onA.minute));
    const shopUs = measured.filter((r) => r.route === 'shop').map((r) => r.us);
    assertHdr(onA.routes.find((r: Json) => r.route === 'shop').p95, exactMs(shopUs, 95), 'the shop route\'s p95');
    const totalMs = onA.routes.find((r: Json) => r.route === 'shop').totalMs;
    assert.ok(Math.abs(totalMs - shopUs.reduce((x, y) => x + y, 0) / 1000) < 0.01, `the route's total time is the sum of both nodes' (${totalMs})`);
  });

  test('an endpoint is counted on the node that answered it, and either node lists every node\'s sum', async () => {
    // The interval of the previous test is still in the minute; B alone answers the echo route now.
    await send(b, '/echo/hello', 3);
    await settle([a, b]);
    await step([a, b], admin);

    const shopA = (await admin(a).get('/api/metrics/routes/shop')).json as Json;
    assert.equal(shopA.node, 'node-a');
    assert.equal(shopA.nodes, 2);
    assert.equal(shopA.period, '60 s');
    assert.deepEqual(shopA.endpoints.map((e: Json) => [e.template, e.deduced, e.requests, e.failed]), [['GET /wait/{id}', true, 38, 0]], 'A\'s 20 and B\'s 18');
    const shopUs = [...a.told, ...b.told].filter((r) => r.route === 'shop').map((r) => r.us);
    assert.equal(shopUs.length, 38);
    assertHdr(shopA.endpoints[0].p95, exactMs(shopUs, 95), 'the endpoint\'s p95 over both nodes\' answers (merged histograms)');
    const shopB = (await admin(b).get('/api/metrics/routes/shop')).json as Json;
    assert.equal(shopB.node, 'node-b');
    assert.deepEqual({ ...shopB, node: 'node-a' }, shopA, 'both nodes list the same sums');

    // A route only B answered: A lists B's endpoint too, and the route's row of the minute is the cluster's.
    const echoA = await admin(a).get('/api/metrics/routes/echo');
    assert.equal(echoA.status, 200, echoA.text);
    assert.deepEqual(echoA.json.endpoints.map((e: Json) => [e.template, e.requests]), [['GET /hello', 3]]);
    const onA = await getMetrics(admin(a));
    assertSums(onA, expected(a.now(), both()), 'on node A');
    assert.deepEqual(onA.routes.find((r: Json) => r.route === 'echo')?.requests, 3);

    // Once the minute closed on both, its history point sums the nodes' counts; its p95 is the
    // larger of the nodes' (an upper bound of the merged one: a point keeps no histogram).
    const minute = Math.floor(a.now() / 60_000);
    while (Math.floor(a.now() / 60_000) === minute) await step([a, b], admin);
    const closedA = (await admin(a).get('/api/metrics/routes/shop')).json as Json;
    const point = (p: Json) => p.endpoints.find((e: Json) => e.template === 'GET /wait/{id}')?.history.find((h: Json) => h.t === minute * 60);
    const nodeP95 = (told: readonly MetricsInput[]) => exactMs(told.filter((r) => r.route === 'shop' && Math.floor(r.at / 60_000) === minute).map((r) => r.us), 95);
    const inMinute = shopUs.length === [...a.told, ...b.told].filter((r) => r.route === 'shop' && Math.floor(r.at / 60_000) === minute).length;
    assert.ok(inMinute, 'the shop calls all ended in one clock minute');
    assert.deepEqual([point(closedA)?.requests, point(closedA)?.failed], [38, 0], JSON.stringify(closedA));
    assertHdr(point(closedA).p95, Math.max(nodeP95(a.told), nodeP95(b.told)), 'the point\'s p95: the larger of the nodes\'');
    assert.deepEqual(point((await admin(b).get('/api/metrics/routes/shop')).json as Json), point(closedA), 'the same point on B');
  });

  test('the live feed on node A sends each interval summed over the nodes that wrote it; the point says how many', async () => {
    const ws = new WebSocket(`${a.t.url('control').replace(/^http/, 'ws')}/api/metrics/live`, { headers: { authorization: token } });
    const messages: Json[] = [];
    ws.on('message', (m) => messages.push(JSON.parse(String(m)) as Json));
    ws.on('error', () => undefined);
    const closed = new Promise<void>((resolve) => ws.on('close', () => resolve()));
    const waitFor = (pred: (m: Json) => boolean, what: string) => until(() => messages.find(pred), what);
    try {
      const hello = await waitFor((m) => m.type === 'hello', 'hello');
      assertSums(hello.metrics, expected(a.now(), both()), 'hello');

      // B closes the interval first, then A: A's tick reads B's summary of it.
      let interval = Math.floor(a.now() / STEP_MS);
      await send(a, '/echo/x', 2);
      await send(b, '/echo/x', 3);
      await settle([a, b]);
      await step([b, a], admin);
      const summed = await waitFor((m) => m.type === 'interval' && m.point.t === interval * 5, 'the interval B wrote first');
      assert.deepEqual(summed.point, { t: interval * 5, answered: 5, failed: 0, nodes: 2 });
      assert.equal(summed.nodes, 2);
      const exp = expected(a.now(), both());
      assert.deepEqual({ requests: summed.minute.requests, failed: summed.minute.failed }, exp.minute);
      assert.deepEqual(Object.fromEntries(summed.routes.map((r: Json) => [r.route, { requests: r.requests, failed: r.failed }])), Object.fromEntries(exp.routes));

      // A closes the next one before B has written it: the point sent counts A alone and says so;
      // the snapshot read once B wrote has both.
      interval = Math.floor(a.now() / STEP_MS);
      await send(a, '/echo/x', 1);
      await send(b, '/echo/x', 1);
      await settle([a, b]);
      await step([a, b], admin);
      const alone = await waitFor((m) => m.type === 'interval' && m.point.t === interval * 5, 'the interval A wrote first');
      assert.deepEqual(alone.point, { t: interval * 5, answered: 1, failed: 0, nodes: 1 });
      const later = await getMetrics(admin(a));
      assert.deepEqual(later.points.at(-1), { t: interval * 5, answered: 2, failed: 0, nodes: 2 });
      assertSums(later, expected(a.now(), both()), 'the snapshot after both wrote');

      // A tick that ends late (here a clock move 4.5 s past it; on a real clock, the summaries'
      // round trips to the database) does not push the next one back: each interval is sent.
      const from = Math.floor(a.now() / STEP_MS);
      const sent = () => messages.filter((m) => m.type === 'interval' && m.point.t >= from * 5).map((m) => m.point.t as number);
      for (const n of [a, b]) await moveAndTick(n, STEP_MS + 4_500);
      for (const n of [a, b]) await moveAndTick(n, STEP_MS);
      await until(() => (sent().length >= 2 ? true : undefined), 'two intervals sent');
      assert.deepEqual(sent(), [from * 5, (from + 1) * 5], 'the interval after a late tick is sent on its own');
      for (const n of [a, b]) await moveAndTick(n, 500);
      await until(() => (sent().length >= 3 ? true : undefined), 'three intervals sent');
      assert.deepEqual(sent(), [from * 5, (from + 1) * 5, (from + 2) * 5]);
      assertSums(await getMetrics(admin(a)), expected(a.now(), both()), 'back on the same ticks');
    } finally {
      ws.close();
      await closed;
    }
  });

  test('a third node joins, then restarts: the new ring covers the points from its start; its previous life leaves the sums once the new one writes', async () => {
    const c1 = (c = await joinCluster('node-c'));
    const three = (n: Node): Seen[] => [{ life: a.life, at: a.now() }, { life: b.life, at: b.now() }, { life: n.life, at: n.now() }];
    const first = Math.floor(a.now() / STEP_MS);
    await send(a, '/shop/x', 3);
    await send(b, '/shop/x', 4);
    await send(c1, '/tail/x', 5);
    await settle([a, b, c1]);
    await step([a, b, c1], admin);
    const before = await getMetrics(admin(a));
    assertSums(before, expected(a.now(), three(c1)), 'three nodes');
    assert.deepEqual(before.points.at(-1), { t: first * 5, answered: 12, failed: 0, nodes: 3 });
    assert.equal(before.points.find((p: Json) => p.t === c1.life.from * 5).nodes, 3, 'C covers the points from its start');
    // Once the minute closed, C's tail endpoint has a history point, written under C's name.
    const minute = Math.floor(a.now() / 60_000);
    while (Math.floor(a.now() / 60_000) === minute) await step([a, b, c1], admin);
    assert.deepEqual(await historyRows(db, 'node-c'), [['tail', 'GET /x', minute * 60, 5]], 'C wrote its point of the minute');
    const tailOnA = (await admin(a).get('/api/metrics/routes/tail')).json as Json;
    assert.deepEqual(tailOnA.endpoints[0].history.map((h: Json) => [h.t, h.requests]), [[minute * 60, 5]], 'A lists C\'s point');

    await c1.t.close();
    c1.unfollow();
    const stoppedAt = a.now();
    const c2 = (c = await startNode(db, 'node-c', stoppedAt + 1000));
    assert.ok(c2.life.from > first, 'the new ring starts after the interval C answered in its previous life');

    // Until the new C writes, the row of its previous life stands: the others still sum it.
    assertSums(await getMetrics(admin(a)), expected(a.now(), [...both(), { life: c1.life, at: stoppedAt }]), 'A before the new C wrote');
    // The new C never reads its own name's row: it sums its new ring and the others'.
    const onNewC = await getMetrics(admin(c2));
    assertSums(onNewC, expected(c2.now(), [{ life: c2.life, at: c2.now() }, ...both()]), 'the new C at its start');
    assert.equal(onNewC.points.find((p: Json) => p.t === first * 5).answered, 7, 'A\'s and B\'s, not C\'s previous life\'s');

    await keepStep(c2, [a, b]);
    const summaries = await rows(db);
    assert.deepEqual([...summaries], [['node-a', a.now()], ['node-b', a.now()], ['node-c', a.now()]], 'one row per node name: the new C replaced its previous life\'s');
    assert.deepEqual(await historyRows(db, 'node-c'), [], 'the new C removed its previous life\'s history: a restart starts anew');

    const now = Math.floor(a.now() / STEP_MS);
    await send(a, '/shop/x', 2);
    await send(b, '/shop/x', 2);
    await send(c2, '/tail/x', 3);
    await settle([a, b, c2]);
    await step([a, b, c2], admin);
    const after = await getMetrics(admin(a));
    assertSums(after, expected(a.now(), three(c2)), 'A after the restart');
    for (const other of [b, c2]) assert.deepEqual(await getMetrics(admin(other)), after, `${other.name} shows the same sums`);
    assert.deepEqual(after.points.at(-1), { t: now * 5, answered: 7, failed: 0, nodes: 3 }, 'the new C counts again');
    assert.deepEqual(after.points.find((p: Json) => p.t === first * 5), { t: first * 5, answered: 7, failed: 0, nodes: 2 },
      'C\'s previous life is no longer in the sum: A and B alone cover the interval it answered in');
    // A and B cover everything since their start; the new C from its start only.
    for (const p of after.points as Json[]) {
      const want = (p.t >= a.life.from * 5 ? 1 : 0) + (p.t >= b.life.from * 5 ? 1 : 0) + (p.t >= c2.life.from * 5 ? 1 : 0);
      assert.equal(p.nodes, want, `point ${p.t}`);
    }
  });

  test('node C stopped for good: its points stay for the hour; its numbers leave the minute once its summary is older than 15 s', async () => {
    const c2 = c!;
    const last = Math.floor(a.now() / STEP_MS) - 1;
    await c2.t.close();
    c2.unfollow();
    const wrote = a.now();
    const seen = (): Seen[] => [...both(), { life: c2.life, at: wrote }];

    // 15 s old: still in the minute (C's 3 requests on the tail route are).
    for (let i = 0; i < 3; i++) await step([a, b], admin);
    assert.equal(a.now() - wrote, FRESH_MS);
    const fresh = await getMetrics(admin(a));
    assertSums(fresh, expected(a.now(), seen()), '15 s after C\'s last summary');
    assert.equal(fresh.routes.find((r: Json) => r.route === 'tail')?.requests, 3);
    // The intervals after C's last write are covered by A and B alone.
    assert.deepEqual(fresh.points.slice(-3).map((p: Json) => p.nodes), [2, 2, 2]);

    // 20 s old: out of the minute and the routes; its curve stays, and its summary is still summed.
    await step([a, b], admin);
    const stale = await getMetrics(admin(a));
    assertSums(stale, expected(a.now(), seen()), '20 s after C\'s last summary');
    assert.equal(stale.routes.find((r: Json) => r.route === 'tail'), undefined, 'C\'s route left the minute');
    assert.equal(stale.nodes, 2, 'the nodes that answer now: a stopped node counts only on the points it covers');
    assert.deepEqual(stale.points.find((p: Json) => p.t === last * 5), { t: last * 5, answered: 7, failed: 0, nodes: 3 }, 'C\'s point stays');
    assert.deepEqual(await getMetrics(admin(b)), stale, 'B shows the same');

    // An hour later its row is removed: the curves no longer reach its intervals anyway.
    await step([a, b], admin, 'PT1H');
    await step([a, b], admin);
    assert.ok(a.now() - wrote > HOUR_MS);
    assert.deepEqual([...(await rows(db)).keys()], ['node-a', 'node-b'], 'the row of a node silent for an hour is removed');
    const gone = await getMetrics(admin(a));
    assert.equal(gone.nodes, 2);
    assert.ok(gone.points.every((p: Json) => p.nodes === 2 && p.answered === 0), 'an hour with no traffic, covered by A and B');
  });
});
