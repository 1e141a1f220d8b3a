import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileExpression, costlyShape, matcher, parseFilters } from '../../src/core/schedules/filters.ts';
import { GatewayError } from '../../src/http/errors.ts';

test('expressions that can backtrack without bound are refused before they run', () => {
  for (const bad of ['(a+)+$', '(a*)*b', '(a|aa)+', '(a|b)*c', '(x?){20}', '((ab)+c)*', '(\\w+\\s?)+$', '(a)\\1', '(?<n>a)\\k<n>', '(a{2})+',
    // A group that only wraps a repeated one repeats it all the same; look-arounds never reach the linear engine.
    '((a+))+$', '(((a|b)))*', '(x((a+)))+', '(?=((a+))+$)', '(?!a)b', '(?<=a)b', '(?<!a)b', 'a(?=b)']) {
    assert.ok(costlyShape(bad), bad);
  }
  for (const fine of ['^prod-\\d+$', '(eu|us)-west', '(ab)+', 'a{2,3}', '^[a-z]+(?:-[a-z]+)?$', 'team-(billing)', '[(]+', '\\(a+\\)+', 'x+?y', '(?<team>bill)ing', '\\(?=x', '[(?=]', '((ab))+']) {
    assert.equal(costlyShape(fine), undefined, fine);
  }
});

test('a filter that does not compile is refused with a sentence naming the key', () => {
  for (const [source, reason] of [['(unclosed', /does not compile/], ['', /1 to 200/], ['(a+)+', /exponential/]] as const) {
    assert.throws(() => compileExpression('env', source), (err: unknown) => err instanceof GatewayError && err.code === 'filter.regex-invalid' && err.field === 'meta.env' && reason.test(err.detail));
  }
  assert.throws(() => parseFilters(new URLSearchParams('metaa.env=x')), (err: unknown) => err instanceof GatewayError && err.code === 'filter.invalid');
});

test('filters are conjoined: exact metadata, expressions, tenant and route', () => {
  const filters = parseFilters(new URLSearchParams('meta.team=billing&meta.env=~^prod&tenant=acme&route=orders&limit=5'), ['limit']);
  const ok = matcher(filters);
  const base = { metadata: { team: 'billing', env: 'prod-eu' }, organisation: 'acme', routeId: 'orders' };
  assert.equal(ok(base), true);
  assert.equal(ok({ ...base, metadata: { team: 'billing', env: 'staging' } }), false);
  assert.equal(ok({ ...base, metadata: { env: 'prod' } }), false);
  assert.equal(ok({ ...base, organisation: null }), false);
  assert.equal(ok({ ...base, routeId: 'billing' }), false);
  assert.equal(matcher([])(base), true);
});
