import { test } from 'node:test';
import assert from 'node:assert/strict';
import { likePattern } from '../../src/store/audit.ts';
import { matches, nextCursor, parseAuditQuery, readMoment, type AuditFilter } from '../../src/core/audit/query.ts';
import type { AuditEvent } from '../../src/core/audit/event.ts';
import { cursorCodec } from '../../src/http/cursor.ts';
import { GatewayError } from '../../src/http/errors.ts';

const parse = (qs: string): AuditFilter => parseAuditQuery(new URLSearchParams(qs));
const refused = (qs: string, code: string, field: string, sentence?: RegExp) => {
  assert.throws(() => parse(qs), (err: unknown) => err instanceof GatewayError && err.code === code && err.field === field
    && err.status === 400 && (sentence === undefined || sentence.test(err.detail)), qs);
};

const event: AuditEvent = {
  id: 'aud-0042', when: 1_764_000_000, part: 'security', action: 'signin.refused', actor: null,
  target: { kind: 'account', name: 'mallory' }, organisation: 'acme', detail: 'bad-credentials', address: '203.0.113.9', node: 'n1',
};

test('no parameter gives no filter, the first page of 100', () => {
  assert.deepEqual(parse(''), {
    parts: null, kind: null, targetKinds: null, notTargetKinds: [], actor: null, target: null, organisation: null,
    from: null, to: null, q: null, limit: 100, before: null,
  });
});

test('every parameter is read into the filter', () => {
  const f = parse(`part=security,changes&kind=signin&targetKind=account,console&notTarget=route&actor=alice&target=mallory&organisation=org_acme&from=1763990000&to=2025-11-24T16:00:00%2B01:00&q=BAD&limit=500&cursor=${nextCursor('aud-0077')}`);
  assert.deepEqual(f, {
    parts: ['security', 'changes'], kind: 'signin', targetKinds: ['account', 'console'], notTargetKinds: ['route'],
    actor: 'alice', target: 'mallory', organisation: 'org_acme', from: 1_763_990_000, to: 1_763_996_400, q: 'BAD', limit: 500, before: 'aud-0077',
  });
});

test('moments are epoch seconds or RFC 3339 with an offset', () => {
  assert.equal(readMoment('0'), 0);
  assert.equal(readMoment('2025-11-24T15:00:00Z'), 1_763_996_400);
  assert.equal(readMoment('2025-11-24T16:00:00.999+01:00'), 1_763_996_400);
  assert.equal(readMoment('2025-11-24T10:30:00-04:30'), 1_763_996_400);
  for (const bad of ['2025-11-24T15:00:00', '2025-02-30T00:00:00Z', '2025-11-24T24:00:00Z', '2025-11-24 15:00:00Z', '-5', '1.5', 'yesterday', '2025-11-24T15:00:00+25:00']) {
    assert.equal(readMoment(bad), undefined, bad);
  }
});

test('each refusal names its parameter', () => {
  refused('sort=when', 'filter.invalid', 'sort', /not a filter/);
  refused('part=changes&part=security', 'filter.invalid', 'part', /once/);
  refused('q=a&q=b', 'filter.invalid', 'q', /once/);
  refused('part=everything', 'filter.invalid', 'part', /"everything"/);
  refused('part=changes,', 'filter.invalid', 'part');
  refused('part=', 'filter.invalid', 'part', /no value/);
  refused('kind=signin%25', 'filter.invalid', 'kind');
  refused('kind=Signin', 'filter.invalid', 'kind');
  refused('kind=signin..refused', 'filter.invalid', 'kind');
  refused('targetKind=routes', 'filter.invalid', 'targetKind');
  refused('notTarget=toString', 'filter.invalid', 'notTarget');
  refused('targetKind=route,console&notTarget=console', 'filter.invalid', 'notTarget', /console/);
  refused('from=yesterday', 'filter.invalid', 'from', /RFC 3339/);
  refused('to=2025-11-24T15:00:00', 'filter.invalid', 'to');
  refused('from=100&to=100', 'filter.invalid', 'to', /after/);
  refused(`q=${'x'.repeat(201)}`, 'filter.invalid', 'q', /200/);
  refused('actor=%20', 'filter.invalid', 'actor');
  refused('organisation=', 'filter.invalid', 'organisation', /no value/);
  refused('organisation=a&organisation=b', 'filter.invalid', 'organisation', /once/);
  refused(`organisation=${'o'.repeat(201)}`, 'filter.invalid', 'organisation', /200/);
  refused('limit=0', 'field.invalid', 'limit', /1 to 500/);
  refused('limit=501', 'field.invalid', 'limit');
  refused('limit=10&limit=20', 'field.invalid', 'limit');
  refused('cursor=abc', 'cursor.invalid', 'cursor');
  refused(`cursor=${cursorCodec('runs', ['integer']).encode([5])}`, 'cursor.invalid', 'cursor');
});

test('prototype-like parameter names are refused as unknown, never read', () => {
  for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) refused(`${name}=x`, 'filter.invalid', name);
  refused(`${'a'.repeat(300)}=x`, 'filter.invalid', 'a'.repeat(50));
});

test('the filter matches an event the way the query will', () => {
  const is = (qs: string) => matches(event, parse(qs));
  assert.equal(is(''), true);
  assert.equal(is('part=security'), true);
  assert.equal(is('part=changes,operations'), false);
  assert.equal(is('kind=signin'), true, 'an action family');
  assert.equal(is('kind=signin.refused'), true);
  assert.equal(is('kind=sign'), false, 'a family is whole words');
  assert.equal(is('kind=signin.locked'), false);
  assert.equal(is('targetKind=account'), true);
  assert.equal(is('targetKind=console'), false);
  assert.equal(is('notTarget=console'), true);
  assert.equal(is('notTarget=account'), false);
  assert.equal(is('actor=alice'), false, 'nobody acted');
  assert.equal(matches({ ...event, actor: { account: 'alice', token: 'ci' } }, parse('actor=alice')), true);
  assert.equal(is('target=mallory'), true);
  assert.equal(matches({ ...event, target: { kind: 'route', id: 'orders' } }, parse('target=orders')), true);
  assert.equal(is('target=eve'), false);
  assert.equal(is('organisation=acme'), true);
  assert.equal(is('organisation=beta'), false);
  assert.equal(matches({ ...event, organisation: undefined }, parse('organisation=acme')), false, 'an event of no organisation');
  assert.equal(is('from=1764000000&to=1764000001'), true, 'from is kept');
  assert.equal(is('to=1764000000'), false, 'to is not');
  assert.equal(is('q=CREDENTIALS'), true, 'q searches the reason without regard to case');
  assert.equal(is('q=203.0.113'), true, 'and the address');
  assert.equal(is('q=mallory'), false, 'not the target');
  assert.equal(is(`cursor=${nextCursor('aud-0043')}`), true);
  assert.equal(is(`cursor=${nextCursor('aud-0042')}`), false, 'the cursor\'s own event was on the page before');
});

test('a search pattern takes % and _ as letters', () => {
  assert.equal(likePattern('50%_off!'), '%50!%!_off!!%');
});
