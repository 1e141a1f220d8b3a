/** A route's endpoints summed over the nodes (spec 1.5 rule 6): counts added, histograms merged, history points' p95 bounded. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sumEndpoints } from '../../src/core/metrics/cluster-endpoints.ts';
import { encode, newHistogram, recordUs } from '../../src/core/metrics/histogram.ts';
import type { WireEndpoint } from '../../src/core/metrics/wire.ts';

function minute(template: string, us: readonly number[], failed = 0, deduced = true): WireEndpoint {
  const h = newHistogram();
  for (const v of us) recordUs(h, v);
  return { template, deduced, requests: us.length, failed, us: us.reduce((a, b) => a + b, 0), latency: us.length === 0 ? null : encode(h) };
}

test('the minute: counts added per template, p95 of the merged histograms (not of the nodes\' p95)', () => {
  // Node A: 19 answers of 1 ms; node B: one of 100 ms. Merged, the 95th of 20 is 1 ms; B alone says 100.
  const a = minute('GET /orders/{id}', Array.from({ length: 19 }, () => 1_000), 1);
  const b = minute('GET /orders/{id}', [100_000], 0);
  const [e] = sumEndpoints([a, b], []);
  assert.deepEqual([e!.template, e!.requests, e!.failed, e!.deduced], ['GET /orders/{id}', 20, 1, true]);
  assert.ok(Math.abs(e!.p95! - 1) <= 0.01, String(e!.p95));
});

test('history: a minute two nodes had sums its counts and takes the larger p95; other minutes stay as written', () => {
  const out = sumEndpoints([], [
    { template: 'GET /a', deduced: true, point: { t: 60, requests: 3, failed: 1, p95: 2 } },
    { template: 'GET /a', deduced: true, point: { t: 60, requests: 5, failed: 0, p95: 7 } },
    { template: 'GET /a', deduced: true, point: { t: 120, requests: 1, failed: 0, p95: null } },
  ]);
  assert.deepEqual(out, [{
    template: 'GET /a', deduced: true, requests: 0, failed: 0, p95: null,
    history: [{ t: 60, requests: 8, failed: 1, p95: 7 }, { t: 120, requests: 1, failed: 0, p95: null }],
  }]);
});

test('declared on one node is declared; endpoints ordered by requests, then by template', () => {
  const out = sumEndpoints([minute('GET /b', [10]), minute('GET /a', [10]), minute('GET /c', [10, 10]), minute('GET /a', [10], 0, false)], []);
  assert.deepEqual(out.map((e) => [e.template, e.requests, e.deduced]), [['GET /a', 2, false], ['GET /c', 2, true], ['GET /b', 1, true]]);
});
