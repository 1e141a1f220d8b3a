import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EndpointRuleView } from '../../src/core/model.ts';
import { EndpointRules, templateProblem } from '../../src/pipeline/endpoint-rules.ts';
import { mulberry32 } from '../helpers/random.ts';

const rule = (method: string, path: string, ...roles: string[]): EndpointRuleView => ({ method, path, roles });
const label = (r: EndpointRuleView | undefined): string | undefined => (r === undefined ? undefined : `${r.method} ${r.path}`);

test('templateProblem accepts literal and {param} segments', () => {
  for (const ok of ['/', '/orders', '/orders/{id}', '/orders/{id}/lines/{line_no}', '/{_x1}', '/a-b.c~d/e@f', '/caf\u00e9']) {
    assert.equal(templateProblem(ok), undefined, ok);
  }
});

test('templateProblem refuses malformed templates with a sentence', () => {
  const bad = [
    '', 'orders', '/orders/', '//orders', '/a//b', '/orders?x=1', '/orders#top', '/{1id}', '/{id', '/id}', '/x{id}',
    '/{id}x', '/{}', '/{a-b}', '/{id}/{id}', '/{ id }', '/{a}/{b}/{a}', '/p/../admin', '/./x', '/a/..', '/a\\b', '/a\u0001', '/a b',
  ];
  for (const path of bad) {
    const problem = templateProblem(path);
    assert.ok(problem !== undefined, `${path} should be refused`);
    assert.match(problem, /\.$/, 'a sentence');
  }
  assert.match(templateProblem('/{id}/{id}')!, /twice/);
});

test('a {param} matches exactly one non-empty segment; literals compare exactly', () => {
  const r = new EndpointRules([rule('GET', '/orders/{id}', 'reader')]);
  assert.equal(label(r.match('GET', '/orders/42')), 'GET /orders/{id}');
  assert.equal(r.match('GET', '/orders'), undefined);
  assert.equal(r.match('GET', '/orders/42/lines'), undefined);
  assert.equal(r.match('GET', '/orders//42'), undefined);
  assert.equal(r.match('GET', '/Orders/42'), undefined);
  assert.equal(r.match('GET', '/ordersx/42'), undefined);
  assert.equal(r.match('GET', 'orders/42'), undefined);
});

test('one trailing slash on the request is ignored; an empty last segment is not a param', () => {
  const r = new EndpointRules([rule('GET', '/orders/{id}'), rule('GET', '/'), rule('GET', '/list')]);
  assert.equal(label(r.match('GET', '/orders/42/')), 'GET /orders/{id}');
  assert.equal(label(r.match('GET', '/list/')), 'GET /list');
  assert.equal(label(r.match('GET', '/')), 'GET /');
  assert.equal(r.match('GET', '/orders/'), undefined);
  assert.equal(r.match('GET', '/orders//'), undefined);
});

test('literals compare to the percent-decoded segment; a malformed escape matches only a param', () => {
  const r = new EndpointRules([rule('GET', '/files/a b'), rule('GET', '/caf\u00e9/{x}'), rule('GET', '/p/{any}'), rule('GET', '/orders/{id}')]);
  assert.equal(label(r.match('GET', '/files/a%20b')), 'GET /files/a b');
  assert.equal(label(r.match('GET', '/caf%C3%A9/1')), 'GET /caf\u00e9/{x}');
  assert.equal(label(r.match('GET', '/%6Frders/1')), 'GET /orders/{id}', 'an encoded literal cannot dodge its rule');
  assert.equal(r.match('GET', '/files/a%2'), undefined);
  assert.equal(r.match('GET', '/fil%ZZes/a b'), undefined);
  assert.equal(label(r.match('GET', '/p/%E0%A4%A')), 'GET /p/{any}');
  assert.equal(label(r.match('GET', '/p/a%2Fb')), 'GET /p/{any}', 'an encoded slash stays inside its segment');
  assert.equal(r.match('GET', '/files/a%2Fb/c'), undefined);
});

test('a segment\'s ";" parameters are not part of it: /admin;x meets the rule of /admin', () => {
  const r = new EndpointRules([rule('*', '/api/admin', 'admin'), rule('GET', '/orders/{id}/lines', 'staff')]);
  assert.equal(label(r.match('GET', '/api/admin;x')), '* /api/admin');
  assert.equal(label(r.match('POST', '/api;v=2/admin;jsessionid=1/')), '* /api/admin');
  assert.equal(label(r.match('GET', '/orders/7;rev=2/lines')), 'GET /orders/{id}/lines');
  assert.equal(r.match('GET', '/api/adminx;x'), undefined);
});

test('more literal segments win, then a literal earlier from the left', () => {
  const r = new EndpointRules([
    rule('GET', '/{a}/{b}/{c}'),
    rule('GET', '/{a}/b/c'),
    rule('GET', '/a/{b}/c'),
    rule('GET', '/a/b/{c}'),
    rule('GET', '/a/b/c'),
  ]);
  assert.equal(label(r.match('GET', '/a/b/c')), 'GET /a/b/c');
  assert.equal(label(r.match('GET', '/a/b/x')), 'GET /a/b/{c}');
  assert.equal(label(r.match('GET', '/a/x/c')), 'GET /a/{b}/c');
  assert.equal(label(r.match('GET', '/x/b/c')), 'GET /{a}/b/c');
  assert.equal(label(r.match('GET', '/x/y/z')), 'GET /{a}/{b}/{c}');
  // Two literals beat one, even when the single literal comes first.
  const counts = new EndpointRules([rule('GET', '/a/{b}/{c}'), rule('GET', '/{a}/b/c')]);
  assert.equal(label(counts.match('GET', '/a/b/c')), 'GET /{a}/b/c');
  // Left to right on equal counts, whatever the input order.
  const left = [rule('GET', '/{a}/b/{c}'), rule('GET', '/a/{b}/{c}')];
  assert.equal(label(new EndpointRules(left).match('GET', '/a/b/c')), 'GET /a/{b}/{c}');
  assert.equal(label(new EndpointRules([...left].reverse()).match('GET', '/a/b/c')), 'GET /a/{b}/{c}');
});

test("path specificity comes before the method; an exact method beats '*' on the same pattern", () => {
  const r = new EndpointRules([rule('*', '/orders/{id}', 'any'), rule('DELETE', '/orders/{id}', 'admin'), rule('*', '/orders/new', 'creator')]);
  assert.deepEqual(r.match('DELETE', '/orders/7')?.roles, ['admin']);
  assert.deepEqual(r.match('GET', '/orders/7')?.roles, ['any']);
  assert.deepEqual(r.match('PATCH', '/orders/7')?.roles, ['any']);
  assert.deepEqual(r.match('DELETE', '/orders/new')?.roles, ['creator']);
});

test('HEAD matches a GET rule; a HEAD rule is preferred when both exist', () => {
  const r = new EndpointRules([rule('GET', '/a', 'get'), rule('*', '/a', 'star'), rule('POST', '/b', 'post')]);
  assert.deepEqual(r.match('HEAD', '/a')?.roles, ['get']);
  assert.deepEqual(r.match('GET', '/a')?.roles, ['get']);
  assert.deepEqual(r.match('OPTIONS', '/a')?.roles, ['star']);
  assert.equal(r.match('HEAD', '/b'), undefined);
  assert.equal(r.match('GET', '/b'), undefined);
  const both = new EndpointRules([rule('GET', '/a', 'get'), rule('HEAD', '/a', 'head')]);
  assert.deepEqual(both.match('HEAD', '/a')?.roles, ['head']);
  assert.deepEqual(both.match('GET', '/a')?.roles, ['get']);
  assert.equal(new EndpointRules([rule('HEAD', '/a')]).match('GET', '/a'), undefined, 'GET does not match a HEAD rule');
});

test('duplicates resolve to the first listed; no rules match nothing', () => {
  const r = new EndpointRules([rule('GET', '/x', 'first'), rule('GET', '/x', 'second')]);
  assert.deepEqual(r.match('GET', '/x')?.roles, ['first']);
  assert.equal(new EndpointRules([]).match('GET', '/'), undefined);
});

test('deep paths beyond the scratch buffer still match', () => {
  const segments = Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? `s${i}` : `{p${i}}`));
  const r = new EndpointRules([rule('GET', `/${segments.join('/')}`, 'deep')]);
  const path = `/${Array.from({ length: 100 }, (_, i) => `s${i}`).join('/')}`;
  assert.deepEqual(r.match('GET', path)?.roles, ['deep']);
  assert.equal(r.match('GET', `${path}/extra`), undefined);
  // Shorter paths after a deep one reuse the buffer correctly.
  const short = new EndpointRules([rule('GET', '/a/{b}')]);
  assert.equal(label(short.match('GET', '/a/b')), 'GET /a/{b}');
});

// ---------------------------------------------------------------------------
// Property: the trie agrees with testing every rule in turn and ranking the matches.


function oracle(rules: readonly EndpointRuleView[], method: string, path: string): EndpointRuleView | undefined {
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  const segs = trimmed === '/' ? [] : trimmed.slice(1).split('/');
  const methodRank = (m: string): number => (m === method ? 0 : method === 'HEAD' && m === 'GET' ? 1 : m === '*' ? 2 : -1);
  const matches = rules.map((rule, order) => ({ rule, order, tpl: rule.path === '/' ? [] : rule.path.slice(1).split('/') }))
    .filter(({ rule, tpl }) => methodRank(rule.method) >= 0 && tpl.length === segs.length && tpl.every((t, i) => {
      const seg = segs[i]!;
      if (t.startsWith('{')) return seg !== '';
      try {
        return decodeURIComponent(seg) === t;
      } catch {
        return false;
      }
    }));
  const lits = (tpl: string[]): number => tpl.filter((t) => !t.startsWith('{')).length;
  matches.sort((a, b) => {
    if (lits(a.tpl) !== lits(b.tpl)) return lits(b.tpl) - lits(a.tpl);
    for (let i = 0; i < a.tpl.length; i++) {
      const al = !a.tpl[i]!.startsWith('{');
      if (al !== !b.tpl[i]!.startsWith('{')) return al ? -1 : 1;
    }
    return methodRank(a.rule.method) - methodRank(b.rule.method) || a.order - b.order;
  });
  return matches[0]?.rule;
}

test('property: the trie agrees with a brute-force ranking of every matching rule', () => {
  const rnd = mulberry32(99);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)]!;
  const LITS = ['a', 'b', 'c', 'caf\u00e9'];
  const REQ = ['a', 'b', 'c', 'd', '', '%61', 'caf%C3%A9', '%ZZ', 'a%2Fb'];
  const METHODS = ['GET', 'HEAD', 'POST', 'DELETE', '*'];
  let matched = 0;
  for (let round = 0; round < 400; round++) {
    const rules = Array.from({ length: 1 + Math.floor(rnd() * 12) }, (_, i) => {
      const depth = Math.floor(rnd() * 4);
      const path = depth === 0 ? '/' : `/${Array.from({ length: depth }, (_, d) => (rnd() < 0.4 ? `{p${d}}` : pick(LITS))).join('/')}`;
      return rule(pick(METHODS), path, `r${i}`);
    });
    const table = new EndpointRules(rules);
    for (let q = 0; q < 25; q++) {
      const depth = Math.floor(rnd() * 4);
      const path = `/${Array.from({ length: depth }, () => pick(REQ)).join('/')}${rnd() < 0.15 ? '/' : ''}`;
      const method = pick(['GET', 'HEAD', 'POST', 'PUT']);
      const expected = oracle(rules, method, path);
      assert.equal(table.match(method, path), expected, `${method} ${path} against ${JSON.stringify(rules)}`);
      if (expected !== undefined) matched++;
    }
  }
  assert.ok(matched > 2_000, `the generator should mostly produce matching requests (${matched})`);
});
