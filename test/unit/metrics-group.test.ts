/**
 * The MetricsRing records a batch of samples a key at a time: latencies counted per histogram slot
 * fill a histogram exactly as recording each value does, and a batch recorded by key leaves the
 * ring as recording its samples one by one does, folds and failures included.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Group } from '../../src/core/metrics/group.ts';
import { encode, HIGHEST_US, newHistogram, recordUs, slotOf, slotValue, SLOTS } from '../../src/core/metrics/histogram.ts';
import { MetricsRing } from '../../src/core/metrics/ring.ts';
import { RouteNames } from '../../src/core/metrics/route-names.ts';
import { BatchRecorder } from '../../src/actors/metrics/record-batch.ts';
import { OUTCOMES, SampleBuffer } from '../../src/actors/metrics/samples.ts';
import { SAMPLE_WIDTH, type MetricsInput, type SampleBatch } from '../../src/actors/metrics/messages.ts';
import type { Outcome } from '../../src/log/access.ts';
import { mulberry32 } from '../helpers/random.ts';

const T0 = Date.UTC(2025, 0, 1, 10);

/** Every percentile from 0 to 100 by 0.5, and the count: what the ring reads of a histogram. */
function readings(h: ReturnType<typeof newHistogram>): number[] {
  const out = [h.totalCount];
  for (let p = 0; p <= 100; p += 0.5) out.push(h.getValueAtPercentile(p));
  return out;
}

test('a slot\'s count recorded at its lowest value fills the histogram as each value would', () => {
  const random = mulberry32(7);
  const values: number[] = [-5, 0, 0.4, 0.6, 1, 2, 127, 128, 255, 256, 257, 511, 512, 513, HIGHEST_US - 1, HIGHEST_US, HIGHEST_US + 1, 5e9];
  for (let k = 1; k < 32; k++) values.push(2 ** k - 1, 2 ** k, 2 ** k + 1);
  for (let i = 0; i < 20_000; i++) values.push(random() < 0.5 ? Math.floor(random() * 20_000) : random() * 2 ** (random() * 32));
  const each = newHistogram();
  const group = new Group();
  for (const v of values) {
    recordUs(each, v);
    group.add(false, v);
    // The slot's lowest value is in the slot, and the slot is within the histogram.
    assert.equal(slotOf(slotValue(slotOf(v))), slotOf(v), `the slot of ${v}`);
    assert.ok(slotOf(v) >= 0 && slotOf(v) < SLOTS, `${v} has a slot in range`);
  }
  const grouped = newHistogram();
  group.recordInto(grouped);
  assert.deepEqual(readings(grouped), readings(each));
  assert.equal(group.requests, values.length);

  // Values one at a time, each alone in its histogram: the same slot as the library's own.
  for (const v of values.slice(0, 200)) {
    const one = newHistogram();
    recordUs(one, v);
    const g = new Group();
    g.add(false, v);
    const viaSlot = newHistogram();
    g.recordInto(viaSlot);
    assert.deepEqual(readings(viaSlot), readings(one), `${v}`);
  }
});

test('a cleared group counts from nothing: counts, failures, durations and slots', () => {
  const g = new Group();
  g.add(true, 1_000);
  g.add(false, 3_000);
  assert.deepEqual([g.requests, g.failed, g.us], [2, 1, 4_000]);
  g.clear();
  assert.deepEqual([g.requests, g.failed, g.us], [0, 0, 0]);
  g.add(false, 7);
  const h = newHistogram();
  g.recordInto(h);
  assert.deepEqual([h.totalCount, h.getValueAtPercentile(100)], [1, 7]);
});

/** The ring as recording each sample of a batch one by one leaves it (the names taken once a key, again after a fold). */
function eachSample(ring: MetricsRing, names: RouteNames, { keys, samples }: SampleBatch): void {
  let named: Array<{ template: string | null; deduced: boolean } | undefined> = [];
  for (let i = 0; i < samples.length; i += SAMPLE_WIDTH) {
    const k = samples[i]!;
    const [route, method, path] = keys[k]!;
    const at = samples[i + 3]!;
    let n = named[k];
    if (n === undefined) {
      const name = route !== null && path !== null ? names.of(route).name(method, path, at) : null;
      if (name?.renamed) {
        ring.rename(route!, name.renamed);
        named = [];
      }
      n = named[k] = { template: name?.template ?? null, deduced: name?.deduced ?? false };
    }
    ring.record({ route, template: n.template, deduced: n.deduced, outcome: OUTCOMES[samples[i + 1]!]!, us: samples[i + 2]!, at });
  }
}

/** What can be read of a ring: the wire summary, each route's endpoints and history. */
function read(ring: MetricsRing, now: number, routes: readonly string[]) {
  return {
    wire: ring.snapshotForWire(now),
    endpoints: routes.map((r) => ring.endpoints(r, now)),
    history: routes.map((r) => ring.history(r)),
    dropped: ring.dropped,
  };
}

test('batches recorded a key at a time leave the ring as their samples one by one do, folds included', () => {
  const random = mulberry32(11);
  const routes = ['shop', 'users', 'files'];
  const outcomes: Outcome[] = ['ok', 'ok', 'ok', 'rejected', 'refused', 'failed', 'upstream-down'];
  const byKey = new MetricsRing(T0);
  const bySample = new MetricsRing(T0);
  const namesByKey = new RouteNames();
  const namesBySample = new RouteNames();
  const recorder = new BatchRecorder(byKey, namesByKey);
  const buffer = new SampleBuffer();
  let at = T0;
  let batches = 0;
  const send = () => {
    const batch = buffer.take();
    if (batch.samples.length === 0) return;
    recorder.record(batch);
    eachSample(bySample, namesBySample, batch);
    batches++;
  };
  // Three minutes at about 60 requests a second; `users` takes thousands of distinct ids, so its
  // endpoints are folded in the middle of batches.
  for (let i = 0; i < 12_000; i++) {
    at += Math.floor(random() * 30);
    const route = random() < 0.05 ? null : routes[Math.floor(random() * routes.length)]!;
    const path = route === null ? null : route === 'users' ? `/users/u${Math.floor(random() * 5_000)}/orders` : `/items/${Math.floor(random() * 4)}`;
    const input: MetricsInput = { route, method: random() < 0.8 ? 'GET' : 'POST', path, outcome: outcomes[Math.floor(random() * outcomes.length)]!, us: 1 + Math.floor(random() ** 3 * 2_000_000), at };
    // As the client does: a batch goes before the first sample of the next interval, or at its size.
    if (buffer.startsInterval(at)) send();
    buffer.add(input.route, input.method, input.path, input.outcome, input.us, input.at);
    if (random() < 0.01) send();
  }
  send();
  assert.ok(batches > 30, `${batches} batches`);
  const now = at + 1;
  const got = read(byKey, now, routes);
  assert.deepEqual(got, read(bySample, now, routes));
  assert.ok(got.endpoints[1]!.some((e) => e.deduced && e.template.includes('{')), 'the users route was folded');
  assert.ok(got.wire.failed.some((f) => f > 0));
});

test('a batch of more than one interval is recorded a sample at a time, each in its interval', () => {
  const byKey = new MetricsRing(T0);
  const bySample = new MetricsRing(T0);
  const recorder = new BatchRecorder(byKey, new RouteNames());
  const names = new RouteNames();
  const buffer = new SampleBuffer();
  // Added without the client's check: the samples straddle three intervals.
  for (let i = 0; i < 300; i++) buffer.add('shop', 'GET', `/items/${i % 3}`, i % 5 === 0 ? 'failed' : 'ok', 100 + i, T0 + i * 50);
  const batch = buffer.take();
  recorder.record(batch);
  eachSample(bySample, names, batch);
  const now = T0 + 60_000;
  assert.deepEqual(read(byKey, now, ['shop']), read(bySample, now, ['shop']));
  const points = byKey.points(now).filter((p) => p.answered > 0);
  assert.deepEqual(points.map((p) => p.answered), [100, 100, 100]);
});
