import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OUTCOMES, SampleBuffer } from '../../src/actors/metrics/samples.ts';
import { SAMPLE_WIDTH, type MetricsInput } from '../../src/actors/metrics/messages.ts';
import { Gatherer } from '../../src/workers/gather.ts';

/** A sample given as the fields of one input. */
const add = (b: SampleBuffer, i: MetricsInput) => b.add(i.route, i.method, i.path, i.outcome, i.us, i.at);

test('a batch keeps each (route, method, path) once and four numbers a sample; null is not the empty string', () => {
  const b = new SampleBuffer();
  add(b, { route: 'shop', method: 'GET', path: '/a', outcome: 'ok', us: 120, at: 1000 });
  add(b, { route: 'shop', method: 'GET', path: '/a', outcome: 'failed', us: 340, at: 1001 });
  add(b, { route: 'shop', method: 'POST', path: '/a', outcome: 'ok', us: 5, at: 1002 });
  add(b, { route: null, method: 'GET', path: null, outcome: 'refused', us: 7, at: 1003 });
  add(b, { route: '', method: 'GET', path: '', outcome: 'upstream-down', us: 9, at: 1004 });
  const batch = b.take();
  assert.deepEqual(batch.keys, [['shop', 'GET', '/a'], ['shop', 'POST', '/a'], [null, 'GET', null], ['', 'GET', '']]);
  const rows = [];
  for (let i = 0; i < batch.samples.length; i += SAMPLE_WIDTH) {
    const [k, o, us, at] = batch.samples.subarray(i, i + SAMPLE_WIDTH);
    rows.push([batch.keys[k!]![2], OUTCOMES[o!], us, at]);
  }
  assert.deepEqual(rows, [['/a', 'ok', 120, 1000], ['/a', 'failed', 340, 1001], ['/a', 'ok', 5, 1002], [null, 'refused', 7, 1003], ['', 'upstream-down', 9, 1004]]);
  // Taken: the next batch starts empty, its keys numbered anew.
  add(b, { route: 'shop', method: 'POST', path: '/a', outcome: 'ok', us: 1, at: 2000 });
  assert.deepEqual(b.take().keys, [['shop', 'POST', '/a']]);
});

test('a batch larger than the buffer it started with keeps every sample in order, and the next starts empty', () => {
  const b = new SampleBuffer();
  for (let i = 0; i < 1_000; i++) add(b, { route: 'shop', method: 'GET', path: `/a/${i % 3}`, outcome: i % 7 === 0 ? 'failed' : 'ok', us: i + 1, at: 10_000 + i });
  const batch = b.take();
  assert.equal(batch.samples.length, 1_000 * SAMPLE_WIDTH);
  for (let i = 0; i < 1_000; i++) {
    const [k, o, us, at] = batch.samples.subarray(i * SAMPLE_WIDTH, (i + 1) * SAMPLE_WIDTH);
    assert.deepEqual([batch.keys[k!]![2], OUTCOMES[o!], us, at], [`/a/${i % 3}`, i % 7 === 0 ? 'failed' : 'ok', i + 1, 10_000 + i], `sample ${i}`);
  }
  add(b, { route: 'shop', method: 'GET', path: '/b', outcome: 'ok', us: 5, at: 20_000 });
  assert.deepEqual([...b.take().samples], [0, 0, 5, 20_000], 'the buffer kept, its length back to nothing');
});

test('a sample of the next 5 s interval says the batch should go first; an empty batch has no interval', () => {
  const b = new SampleBuffer();
  assert.equal(b.startsInterval(12_000), false, 'nothing gathered');
  add(b, { route: 'shop', method: 'GET', path: '/a', outcome: 'ok', us: 1, at: 10_000 });
  assert.equal(b.startsInterval(14_999), false, 'the same interval');
  assert.equal(b.startsInterval(15_000), true, 'the next interval begins at 15 s');
  assert.equal(b.startsInterval(9_999), true, 'a sample of the interval before');
  b.take();
  assert.equal(b.startsInterval(15_000), false, 'taken: nothing gathered again');
  add(b, { route: 'shop', method: 'GET', path: '/a', outcome: 'ok', us: 1, at: 15_000 });
  assert.equal(b.startsInterval(19_999), false);
});

test('a gatherer tells at its size at once, and on flush; nothing when nothing was gathered', () => {
  const told: number[][] = [];
  let items: number[] = [];
  const g = new Gatherer<number[]>({ everyMs: 60_000, max: 3, pack: () => { const x = items; items = []; return x; }, tell: (b) => told.push(b) });
  const add = (n: number) => { items.push(n); g.added(); };
  add(1); add(2);
  assert.deepEqual(told, []);
  add(3);
  assert.deepEqual(told, [[1, 2, 3]]);
  add(4);
  assert.equal(g.count, 1);
  g.flush();
  g.flush();
  assert.deepEqual(told, [[1, 2, 3], [4]]);
  assert.equal(g.count, 0);
});
