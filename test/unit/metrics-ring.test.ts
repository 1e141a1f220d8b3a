import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Outcome } from '../../src/log/access.ts';
import { RouteEndpoints } from '../../src/core/metrics/endpoint-names.ts';
import { HIGHEST_US } from '../../src/core/metrics/histogram.ts';
import { MetricsRing, type MetricsEntry, POINTS } from '../../src/core/metrics/ring.ts';
import { sumNodes, type WireSnapshot } from '../../src/core/metrics/wire.ts';
import { mulberry32 } from '../helpers/random.ts';

/** A round hour: intervals and minutes start on it. */
const T0 = Date.UTC(2025, 0, 1, 10);
const S0 = T0 / 1000;
const MIN = 60_000;

function entry(at: number, us: number, more: Partial<MetricsEntry> = {}): MetricsEntry {
  return { route: 'r', template: 'GET /orders/{id}', deduced: true, outcome: 'ok', us, at, ...more };
}

/** The p-th percentile as HdrHistogram defines it, on the exact values: the ceil(p% * n)-th smallest. */
function exact(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil((p / 100) * sorted.length)) - 1]!;
}

/** Two significant digits: within 1 % of the exact value (ms compared, µs recorded). */
function near(actual: number | null, exactUs: number, what: string): void {
  assert.ok(actual !== null, what);
  const want = exactUs / 1000;
  assert.ok(Math.abs(actual - want) <= want * 0.01 + 0.001, `${what}: ${actual} ms, exact ${want} ms`);
}

test('an hour of fake time: 720 points, each with its counts, older ones rolled off', () => {
  const ring = new MetricsRing(T0);
  const want = new Map<number, { answered: number; failed: number }>();
  const outcomes: Outcome[] = ['ok', 'failed', 'rejected', 'upstream-down', 'refused', 'ok', 'ok'];
  for (let s = 0; s < 65 * 60; s++) {
    for (let i = 0; i <= s % 3; i++) {
      const outcome = outcomes[(s + i) % outcomes.length]!;
      ring.record(entry(T0 + s * 1000 + i * 100, 1_000 + i, { outcome }));
      const t = S0 + s - (s % 5);
      const w = want.get(t) ?? { answered: 0, failed: 0 };
      w.answered++;
      if (outcome === 'failed' || outcome === 'upstream-down') w.failed++;
      want.set(t, w);
    }
    ring.tick(T0 + s * 1000 + 999);
    if (s === 100) assert.equal(ring.points(T0 + s * 1000).length, 20, 'a young ring has only the intervals it lived');
  }
  const now = T0 + 65 * MIN;
  const points = ring.points(now);
  assert.equal(points.length, POINTS);
  assert.equal(points[0]!.t, S0 + 5 * 60, 'the first five minutes rolled off');
  assert.equal(points.at(-1)!.t, S0 + 65 * 60 - 5, 'the open interval is not a point');
  for (const p of points) assert.deepEqual({ answered: p.answered, failed: p.failed }, want.get(p.t), `point ${p.t}`);
  // An idle quarter of an hour later, the curve shows it as zeros.
  const later = ring.points(now + 15 * MIN);
  assert.equal(later.length, POINTS);
  assert.deepEqual(later.slice(-180).map((p) => p.answered), new Array(180).fill(0));
  assert.deepEqual(later[0], { t: S0 + 20 * 60, ...want.get(S0 + 20 * 60)! });
});

test('the minute: counts, rps, and p50/p95 of the merged histograms match the exact values', () => {
  const rnd = mulberry32(5);
  const ring = new MetricsRing(T0);
  const values: number[] = [];
  let failed = 0;
  for (let i = 0; i < 6_000; i++) {
    // Log-uniform from 50 µs to 5 s, with a slow tail.
    const us = Math.round(50 * Math.exp(rnd() * Math.log(100_000)));
    const at = T0 + 60_000 + Math.floor(rnd() * 60_000);
    const outcome: Outcome = rnd() < 0.05 ? 'failed' : 'ok';
    if (outcome === 'failed') failed++;
    values.push(us);
    ring.record(entry(at, us, { outcome }));
  }
  const m = ring.minute(T0 + 120_000);
  assert.equal(m.period, '60 s');
  assert.equal(m.requests, 6_000);
  assert.equal(m.failed, failed);
  assert.equal(m.rps, 100);
  near(m.p50, exact(values, 50), 'p50');
  near(m.p95, exact(values, 95), 'p95');
  // Five seconds later the first interval has left the minute.
  assert.ok(ring.minute(T0 + 125_000).requests < 6_000);
});

test('the minute p95 is of all the values, never an average of the intervals\' percentiles', () => {
  const ring = new MetricsRing(T0);
  const values: number[] = [];
  for (let i = 0; i < 1_000; i++) ring.record(entry(T0 + 1_000, 1_000)), values.push(1_000);
  for (let i = 0; i < 100; i++) ring.record(entry(T0 + 6_000, 100_000)), values.push(100_000);
  const m = ring.minute(T0 + 60_000);
  near(m.p95, exact(values, 95), 'p95');
  assert.ok(m.p95! > 99, 'an average of the two intervals\' p95 would be about 50 ms');
  near(m.p50, 1_000, 'p50');
});

test('the minute is the 12 closed intervals: not the open one, not the one before', () => {
  const ring = new MetricsRing(T0);
  ring.record(entry(T0 + 4_999, 1_000));
  ring.record(entry(T0 + 5_000, 2_000));
  ring.record(entry(T0 + 64_999, 3_000));
  ring.record(entry(T0 + 65_000, 4_000));
  const m = ring.minute(T0 + 65_000);
  assert.equal(m.requests, 2);
  const [row] = ring.routes(T0 + 65_000);
  assert.deepEqual({ ...row, p95: 0 }, { route: 'r', requests: 2, failed: 0, p95: 0, totalMs: 5 });
  near(row!.p95, 3_000, 'route p95');
  assert.deepEqual(ring.minute(T0 + 10 * MIN), { period: '60 s', requests: 0, failed: 0, rps: 0, p50: null, p95: null });
});

test('routes and their three rankings', () => {
  const ring = new MetricsRing(T0);
  const at = T0 + 10_000;
  for (let i = 0; i < 5; i++) ring.record(entry(at, 800_000, { route: 'slow' }));
  for (let i = 0; i < 40; i++) ring.record(entry(at, 2_000, { route: 'failing', outcome: i < 30 ? 'upstream-down' : 'ok' }));
  for (let i = 0; i < 200; i++) ring.record(entry(at, 50_000, { route: 'busy', outcome: i < 2 ? 'failed' : 'ok' }));
  ring.record(entry(at, 1_000, { route: 'quiet' }));
  ring.record(entry(at, 1_000, { route: null, template: null }));
  const now = T0 + 65_000;
  const rows = new Map(ring.routes(now).map((r) => [r.route, r]));
  assert.deepEqual([...rows.keys()].sort(), ['busy', 'failing', 'quiet', 'slow'], 'no row for requests outside any route');
  assert.deepEqual({ ...rows.get('busy'), p95: 0 }, { route: 'busy', requests: 200, failed: 2, p95: 0, totalMs: 10_000 });
  near(rows.get('busy')!.p95, 50_000, 'busy p95');
  assert.equal(rows.get('failing')!.failed, 30);
  near(rows.get('slow')!.p95, 800_000, 'slow p95');
  assert.equal(ring.minute(now).requests, 247);
  assert.deepEqual(ring.rankings(now), {
    slowest: ['slow', 'busy', 'failing', 'quiet'],
    failing: ['failing', 'busy'],
    totalTime: ['busy', 'slow', 'failing', 'quiet'],
  });
});

test('endpoint history: a point only for a minute with traffic, seventy minutes at most', () => {
  const ring = new MetricsRing(T0);
  const perMinute = new Map<number, number[]>();
  const hit = (m: number, n: number) => {
    for (let i = 0; i < n; i++) {
      const us = 1_000 * (m + 1) + i * 37;
      ring.record(entry(T0 + m * MIN + 1_000 + i * 50, us, { outcome: i === 0 ? 'failed' : 'ok' }));
      perMinute.set(m, [...(perMinute.get(m) ?? []), us]);
    }
  };
  hit(0, 3);
  hit(2, 30);
  hit(5, 4);
  ring.tick(T0 + 7 * MIN);
  const [e] = ring.endpoints('r', T0 + 7 * MIN);
  assert.equal(e!.template, 'GET /orders/{id}');
  assert.equal(e!.requests, 0, 'nothing in the last 60 s');
  assert.equal(e!.p95, null);
  assert.deepEqual(e!.history.map((p) => [p.t, p.requests, p.failed]), [[S0, 3, 1], [S0 + 120, 30, 1], [S0 + 300, 4, 1]]);
  near(e!.history[1]!.p95, exact(perMinute.get(2)!, 95), 'history p95');

  for (let m = 7; m <= 90; m++) hit(m, 1 + (m % 4));
  const es = ring.endpoints('r', T0 + 91 * MIN);
  const h = es[0]!.history;
  assert.equal(h.length, 70);
  assert.equal(h[0]!.t, S0 + 21 * 60);
  assert.equal(h.at(-1)!.t, S0 + 90 * 60);
  assert.deepEqual(h.map((p) => p.requests), Array.from({ length: 70 }, (_, i) => 1 + ((21 + i) % 4)));
  // Seventy idle minutes later nothing is left, not even the endpoint.
  assert.deepEqual(ring.endpoints('r', T0 + 161 * MIN), []);
});

test('a fold renames retroactively: the minute and the history keep every count', () => {
  const ring = new MetricsRing(T0);
  const names = new RouteEndpoints();
  const call = (path: string, at: number, us: number) => {
    const n = names.name('GET', path, at);
    if (n.renamed !== null) ring.rename('r', n.renamed);
    ring.record(entry(at, us, { template: n.template, deduced: n.deduced }));
  };
  for (const u of ['alice', 'bob', 'carol']) for (let i = 0; i < 2; i++) call(`/profile/${u}`, T0 + 10_000, 5_000);
  for (const u of ['alice', 'bob']) call(`/profile/${u}`, T0 + MIN + 10_000, 7_000);
  const before = ring.endpoints('r', T0 + MIN + 20_000).map((e) => [e.template, e.requests, e.history.map((p) => p.requests)]);
  assert.deepEqual(before, [['GET /profile/alice', 1, [2]], ['GET /profile/bob', 1, [2]], ['GET /profile/carol', 0, [2]]]);
  call('/profile/dave', T0 + MIN + 20_000, 9_000);
  const after = ring.endpoints('r', T0 + MIN + 30_000);
  assert.equal(after.length, 1);
  assert.equal(after[0]!.template, 'GET /profile/{id}');
  assert.equal(after[0]!.deduced, true);
  assert.equal(after[0]!.requests, 3);
  near(after[0]!.p95, 9_000, 'merged histograms');
  assert.deepEqual(after[0]!.history.map((p) => [p.t, p.requests]), [[S0, 6]]);
  near(after[0]!.history[0]!.p95, 5_000, 'history p95');
});

test('late entries: within the minute they count, within the hour on the curve only, older dropped', () => {
  const ring = new MetricsRing(T0);
  ring.tick(T0 + 30_000);
  ring.record(entry(T0 + 12_000, 1_000));
  ring.record(entry(T0 - 1, 1_000));
  assert.equal(ring.dropped, 1, 'from before the ring started');
  assert.equal(ring.minute(T0 + 30_000).requests, 1);
  ring.tick(T0 + 10 * MIN);
  ring.record(entry(T0 + 5 * MIN, 1_000));
  assert.equal(ring.minute(T0 + 10 * MIN).requests, 0);
  assert.equal(ring.points(T0 + 10 * MIN).find((p) => p.t === S0 + 300)!.answered, 1);
  ring.tick(T0 + 70 * MIN);
  ring.record(entry(T0 + 5 * MIN, 1_000));
  assert.equal(ring.dropped, 2, 'older than the hour');
  // Durations out of the histogram's range are clamped, not thrown.
  ring.record(entry(T0 + 70 * MIN, HIGHEST_US * 10));
  ring.record(entry(T0 + 70 * MIN, -5));
  assert.equal(ring.minute(T0 + 71 * MIN).requests, 2);
});

test('sumNodes adds the nodes point by point and says how many cover each point', () => {
  const started = { a: T0, b: T0, c: T0 + 30 * MIN };
  const rate = { a: 1, b: 2, c: 3 };
  const latency = { a: 1_000, b: 10_000, c: 100_000 };
  const rings = { a: new MetricsRing(started.a), b: new MetricsRing(started.b), c: new MetricsRing(started.c) };
  const now = T0 + 65 * MIN;
  for (let t = T0; t < now; t += 1_000) {
    for (const k of ['a', 'b', 'c'] as const) {
      if (t < started[k]) continue;
      for (let i = 0; i < rate[k]; i++) rings[k].record(entry(t + i, latency[k], { route: k === 'c' ? 'x' : 'y', outcome: k === 'b' && i === 0 ? 'failed' : 'ok' }));
      rings[k].tick(t);
    }
  }
  // Snapshots cross threads and nodes as JSON.
  const snaps = (['a', 'b', 'c'] as const).map((k) => JSON.parse(JSON.stringify(rings[k].snapshotForWire(now))) as WireSnapshot);
  const sum = sumNodes(snaps, now);
  assert.equal(sum.interval, 5);
  assert.equal(sum.nodes, 3);
  assert.equal(sum.points.length, POINTS);
  for (const p of sum.points) {
    const c = p.t >= started.c / 1000;
    assert.deepEqual(p, { t: p.t, answered: c ? 30 : 15, failed: 5, nodes: c ? 3 : 2 }, `point ${p.t}`);
  }
  assert.equal(sum.minute.requests, 360);
  assert.equal(sum.minute.failed, 60);
  assert.equal(sum.minute.rps, 6);
  const values = [...new Array(60).fill(1_000), ...new Array(120).fill(10_000), ...new Array(180).fill(100_000)];
  near(sum.minute.p50, exact(values, 50), 'cluster p50');
  near(sum.minute.p95, exact(values, 95), 'cluster p95');
  const routes = new Map(sum.routes.map((r) => [r.route, r]));
  assert.deepEqual(routes.get('y'), { route: 'y', requests: 180, failed: 60, p95: routes.get('y')!.p95, totalMs: 60 + 1_200 });
  near(routes.get('y')!.p95, 10_000, 'route y p95 over nodes a and b');
  assert.deepEqual(sum.rankings.slowest, ['x', 'y']);

  // Forty minutes in, part of the hour is before any node: those points cover none.
  const young = new MetricsRing(T0);
  young.record(entry(T0 + 1_000, 1_000));
  const early = sumNodes([young.snapshotForWire(T0 + 40 * MIN)], T0 + 40 * MIN);
  assert.equal(early.points.find((p) => p.t === S0)!.answered, 1);
  assert.equal(early.points.filter((p) => p.nodes === 0).length, 240);
  assert.ok(early.points.filter((p) => p.nodes === 0).every((p) => p.t < S0 && p.answered === 0));
  assert.deepEqual(sumNodes([], now).minute, { period: '60 s', requests: 0, failed: 0, rps: 0, p50: null, p95: null });
});
