import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LABEL_TTL_MS } from '../../src/core/metrics/endpoint-names.ts';
import { RouteNames } from '../../src/core/metrics/route-names.ts';

const T0 = Date.UTC(2025, 0, 1);

test('route churn: a deleted route\'s entry goes once its labels aged out; a live route\'s stays, its folds with it', () => {
  const names = new RouteNames();
  names.declare({}, ['kept']);
  for (let i = 0; i < 1_000; i++) {
    const route = `churn-${i}`;
    names.declare({}, ['kept', route]);
    names.of(route).name('GET', `/items/${i}`, T0);
    names.of('kept').name('GET', `/kept/${i}`, T0);
    names.declare({}, ['kept']);
  }
  assert.equal(names.size, 1_001);
  names.sweep(T0 + LABEL_TTL_MS);
  assert.equal(names.size, 1_001, 'labels younger than the hour keep their route\'s entry');
  names.sweep(T0 + LABEL_TTL_MS + 1);
  assert.equal(names.size, 1, 'the deleted routes are gone; the live one, quiet, is kept');
  // The live route's folds survive its quiet hour: the next distinct identifier is named by the fold.
  assert.equal(names.of('kept').name('GET', '/kept/123456', T0 + 2 * LABEL_TTL_MS).template, 'GET /kept/{id}');
});

test('a route recreated under a deleted one\'s id starts afresh; before the configuration is told, nothing is let go', () => {
  const names = new RouteNames();
  names.of('r').name('GET', '/a', T0);
  names.sweep(T0 + LABEL_TTL_MS + 1);
  assert.equal(names.size, 1, 'no configuration told yet');
  names.declare({ r: [{ method: 'GET', template: '/orders/{id}' }] }, ['r']);
  assert.equal(names.of('r').name('GET', '/orders/open', T0).template, 'GET /orders/{id}', 'redeclared');
  names.declare({}, []);
  names.sweep(T0 + 2 * LABEL_TTL_MS + 1);
  assert.equal(names.size, 0);
  assert.equal(names.of('r').name('GET', '/status', T0 + 3 * LABEL_TTL_MS).template, 'GET /status', 'no declaration now');
});
