/**
 * What a node shares of its endpoints with the others (spec 1.5 rule 6), against a real store on
 * both databases: the minute's endpoints per route, each history point once, a fold's rewrite, and
 * a database that fails half-way: the routes it carried are written again whole, so no point is
 * lost nor counted twice. Two nodes share one database here as they would on PostgreSQL; the
 * SQLite file serves one node, which shares nothing.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { migratedStore, type TestDatabase } from '../helpers/db.ts';
import type { Store } from '../../src/store/orm.ts';
import { MetricsRing } from '../../src/core/metrics/ring.ts';
import { SharedEndpoints } from '../../src/actors/metrics/shared-endpoints.ts';
import { MetricsHistoryRow } from '../../src/store/entities.ts';

let db: TestDatabase;
let store: Store;
const T0 = Date.UTC(2026, 10, 27, 10, 0, 1);
const MINUTE = 60_000;

before(async () => {
  ({ db, store } = await migratedStore());
});
after(async () => {
  await store.close();
  await db.drop();
});

/** A store whose every unit of work fails while `down` is set. */
function flaky(real: Store): Store & { down: boolean } {
  const s = {
    ...real,
    down: false,
    em() {
      if (s.down) throw new Error('database away');
      return real.em();
    },
  };
  return s;
}

function answer(ring: MetricsRing, template: string, us: number, at: number, route = 'shop'): void {
  ring.record({ route, template, deduced: true, outcome: 'ok', us, at });
}

/** Moves the ring to `now` and runs one interval's share; false when the write failed. */
async function tick(shared: SharedEndpoints, ring: MetricsRing, now: number): Promise<boolean> {
  ring.tick(now);
  shared.collect();
  try {
    await shared.write(now);
    return true;
  } catch {
    return false;
  }
}

async function rowsOf(node: string): Promise<Array<[string, number, number]>> {
  const rows = await store.em().find(MetricsHistoryRow, { node }, { orderBy: { t: 'asc', template: 'asc' } });
  return rows.map((r) => [r.template, r.t, r.requests]);
}

test('two nodes: either lists the sum of the minute and of each closed minute; a failed write loses and doubles nothing', async () => {
  const ringA = new MetricsRing(T0);
  const ringB = new MetricsRing(T0);
  const a = new SharedEndpoints(store, 'node-a', ringA, true);
  const storeB = flaky(store);
  const b = new SharedEndpoints(storeB, 'node-b', ringB, true);

  answer(ringA, 'GET /orders/{id}', 1_000, T0 + 1_000);
  answer(ringB, 'GET /orders/{id}', 3_000, T0 + 1_000);
  answer(ringB, 'GET /orders/{id}', 5_000, T0 + 2_000);
  assert.ok(await tick(a, ringA, T0 + 5_000));
  assert.ok(await tick(b, ringB, T0 + 5_000));
  const minute = (await a.read('shop', T0 + 5_000));
  assert.equal(minute.nodes, 1, 'no summary row written by B in this test: only this node is counted fresh');
  assert.deepEqual(minute.endpoints.map((e) => [e.template, e.requests]), [['GET /orders/{id}', 3]], 'A lists B\'s two and its one');

  // The minute closes; B's database is away for two intervals, then back.
  storeB.down = true;
  const next = T0 + MINUTE;
  assert.ok(await tick(a, ringA, next));
  assert.equal(await tick(b, ringB, next), false);
  answer(ringB, 'GET /orders/{id}', 2_000, next + 1_000);
  assert.equal(await tick(b, ringB, next + 5_000), false);
  storeB.down = false;
  assert.ok(await tick(b, ringB, next + 10_000));
  const t = Math.floor(T0 / MINUTE) * 60;
  assert.deepEqual(await rowsOf('node-b'), [['GET /orders/{id}', t, 2]], 'B\'s point of the minute written once, after the database came back');
  assert.ok(await tick(b, ringB, next + 15_000));
  assert.deepEqual(await rowsOf('node-b'), [['GET /orders/{id}', t, 2]], 'and not again');

  const read = await a.read('shop', next + 15_000);
  const endpoint = read.endpoints.find((e) => e.template === 'GET /orders/{id}')!;
  assert.deepEqual(endpoint.history.map((h) => [h.t, h.requests]), [[t, 3]], 'the closed minute sums A\'s 1 and B\'s 2');
  const p95 = endpoint.history[0]!.p95!;
  assert.ok(Math.abs(p95 - 5) <= 0.05, `the larger of the nodes' p95, B's 5 ms within the histograms' 1 % (${p95})`);
  assert.equal(endpoint.requests, 1, 'the minute now: B\'s answer of the new minute');
});

test('a fold relabels a node\'s points: its rows are replaced, not added to', async () => {
  const ring = new MetricsRing(T0);
  const shared = new SharedEndpoints(store, 'node-c', ring, true);
  answer(ring, 'GET /users/alice', 1_000, T0 + 1_000, 'users');
  answer(ring, 'GET /users/bob', 1_000, T0 + 1_000, 'users');
  assert.ok(await tick(shared, ring, T0 + MINUTE));
  const t = Math.floor(T0 / MINUTE) * 60;
  assert.deepEqual(await rowsOf('node-c'), [['GET /users/alice', t, 1], ['GET /users/bob', t, 1]]);
  ring.rename('users', new Map([['GET /users/alice', 'GET /users/{id}'], ['GET /users/bob', 'GET /users/{id}']]));
  assert.ok(await tick(shared, ring, T0 + MINUTE + 5_000));
  assert.deepEqual(await rowsOf('node-c'), [['GET /users/{id}', t, 2]]);
});

test('words each node kept at a position are folded together in the sum: three names a node, never six in the list', async () => {
  const ringA = new MetricsRing(T0);
  const ringB = new MetricsRing(T0);
  const a = new SharedEndpoints(store, 'node-e', ringA, true);
  const b = new SharedEndpoints(store, 'node-f', ringB, true);
  for (const u of ['alice', 'bob', 'carol']) answer(ringA, `GET /pp/people/${u}`, 1_000, T0 + 1_000, 'pp');
  for (const u of ['dave', 'erin', 'frank']) answer(ringB, `GET /pp/people/${u}`, 1_000, T0 + 1_000, 'pp');
  answer(ringB, 'GET /pp/status', 1_000, T0 + 1_000, 'pp');
  assert.ok(await tick(a, ringA, T0 + 5_000));
  assert.ok(await tick(b, ringB, T0 + 5_000));
  const minute = await a.read('pp', T0 + 5_000);
  assert.deepEqual(minute.endpoints.map((e) => [e.template, e.requests]), [['GET /pp/people/{id}', 6], ['GET /pp/status', 1]]);
  // The closed minute's points too, as each node wrote them with its own words.
  assert.ok(await tick(a, ringA, T0 + MINUTE));
  assert.ok(await tick(b, ringB, T0 + MINUTE));
  const read = await b.read('pp', T0 + MINUTE);
  const t = Math.floor(T0 / MINUTE) * 60;
  assert.deepEqual(read.endpoints.map((e) => [e.template, e.history.map((h) => [h.t, h.requests])]), [
    ['GET /pp/people/{id}', [[t, 6]]],
    ['GET /pp/status', [[t, 1]]],
  ]);
});

test('a node that shares nothing (the SQLite file) writes nothing and lists its own', async () => {
  const ring = new MetricsRing(T0);
  const shared = new SharedEndpoints(store, 'node-d', ring, false);
  answer(ring, 'GET /x', 1_000, T0 + 1_000);
  assert.ok(await tick(shared, ring, T0 + MINUTE));
  assert.deepEqual(await rowsOf('node-d'), []);
  const read = await shared.read('shop', T0 + MINUTE);
  assert.deepEqual([read.nodes, read.endpoints.map((e) => [e.template, e.history.length])], [1, [['GET /x', 1]]]);
});
