import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FOLD_AT, foldAcross, LABEL_TTL_MS, MAX_DEPTH, NODE_CAP, OTHER, RouteEndpoints, TEMPLATE_BUDGET, type EndpointName } from '../../src/core/metrics/endpoint-names.ts';
import { isIdentifier } from '../../src/core/metrics/segments.ts';
import { endpointIndex } from '../../src/core/routes/endpoints.ts';
import { mulberry32 } from '../helpers/random.ts';

const T0 = Date.UTC(2025, 0, 1);

/** What the ring keeps per label, reduced to counts: renames merge as the ring's `rename` does. */
class Counts {
  readonly byLabel = new Map<string, number>();
  readonly seen = new Set<string>();

  add(n: EndpointName): void {
    if (n.renamed !== null) {
      for (const [from, to] of n.renamed) {
        const c = this.byLabel.get(from) ?? 0;
        this.byLabel.delete(from);
        if (c > 0) this.byLabel.set(to, (this.byLabel.get(to) ?? 0) + c);
      }
    }
    this.byLabel.set(n.template, (this.byLabel.get(n.template) ?? 0) + 1);
    this.seen.add(n.template);
  }

  total(): number {
    return [...this.byLabel.values()].reduce((a, b) => a + b, 0);
  }
}

test('identifier-like segments fold on sight; words do not', () => {
  const ids = [
    '42', '-7', '0042', '550e8400-e29b-41d4-a716-446655440000', '5f3a9c1e', '0x5f3a9c1e77', '01ARZ3NDEKTSV4RRFFQ69G5FAV',
    'AbCdEf0123456789xyz', 'sk_live_4eC39HqLyjWDarjtT1zdp7dc', 'alice@example.com', 'bob%40example.com', '10.0.0.1',
    '10.0.0.1:8080', '2001:db8::1', '[::1]', 'fe80::1%25eth0', 'caf%C3%A9', '2025-01-31', 'x'.repeat(41), '{id}', '{name}',
    // An address, a number or a key inside a longer segment.
    '10.0.0.1.json', 'ip-10-0-0-1', '127.0.0.1.nip.io', '0x7f.0.0.1', 'host_192_168_0_7', 'tel:+33612345678', 'mailto:bob',
    'order-12345', 'v20231201', 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJhIn0.', 'eyJzdWIiOiJhIn0', 'AbCdEf0123456789xyz.json',
  ];
  for (const s of ids) assert.equal(isIdentifier(s), true, s);
  const words = [
    'orders', 'v1', 'v2.1', 'deadbeef', 'me', 'api', 'internationalization', 'user-profile', 'search', 'a:b', 'x'.repeat(40),
    'v1.2.3', 'report.pdf', 'es2015', 'sha256', 'things:batchGet', 'utf-8', 'page-2',
  ];
  for (const s of words) assert.equal(isIdentifier(s), false, s);
});

test('a deduced template folds identifiers and is marked deduced', () => {
  const r = new RouteEndpoints();
  assert.deepEqual(r.name('GET', '/orders/123', T0), { template: 'GET /orders/{id}', deduced: true, renamed: null });
  assert.equal(r.name('DELETE', '/orders/550e8400-e29b-41d4-a716-446655440000/items/9', T0).template, 'DELETE /orders/{id}/items/{id}');
  assert.equal(r.name('GET', '/', T0).template, 'GET /');
  assert.equal(r.name('GET', '/orders/', T0).template, 'GET /orders');
});

test('the query string never reaches a label', () => {
  const r = new RouteEndpoints();
  const n = r.name('GET', '/search?q=alice@example.com&key=secret', T0);
  assert.equal(n.template, 'GET /search');
  assert.equal(r.name('GET', '/search#frag?x=1', T0).template, 'GET /search');
  const d = new RouteEndpoints(endpointIndex([{ method: 'GET', template: '/orders/{id}' }]));
  assert.deepEqual(d.name('GET', '/orders/7?token=abc', T0), { template: 'GET /orders/{id}', deduced: false, renamed: null });
});

test('e-mail and IP addresses are never labels, even the first one at a position', () => {
  const r = new RouteEndpoints();
  for (const who of ['alice@example.com', 'bob%40example.com', '192.168.1.20', '2001:db8::7', 'fe80::1%25eth0']) {
    const n = r.name('GET', `/people/${who}/profile`, T0);
    assert.equal(n.template, 'GET /people/{id}/profile');
  }
});

test('an attacker\'s paths: addresses, numbers and keys inside a segment or behind matrix parameters are never labels', () => {
  const sent: Array<[path: string, template: string]> = [
    ['/a/127.0.0.1;v=1', 'GET /a/{id}'],
    ['/b/10.0.0.1;', 'GET /b/{id}'],
    ['/c/10.0.0.1.json', 'GET /c/{id}'],
    ['/d/0x7f.0.0.1', 'GET /d/{id}'],
    ['/e/127.0.0.1.nip.io', 'GET /e/{id}'],
    ['/f/ip-10-0-0-1', 'GET /f/{id}'],
    ['/g/tel:+33612345678', 'GET /g/{id}'],
    ['/h/eyJhbGciOiJub25lIn0.eyJzdWIiOiJhIn0.', 'GET /h/{id}'],
    // Matrix parameters are values, left out as the query is; what they followed is judged alone.
    ['/i/orders;jsessionid=ABC123DEF', 'GET /i/orders'],
    ['/users;v=2/alice', 'GET /users/{id}'],
    ['/users;name=alice', 'GET /users'],
  ];
  for (const [path, template] of sent) assert.equal(new RouteEndpoints().name('GET', path, T0).template, template, path);
});

test(`the ${FOLD_AT + 1}th distinct literal at a position folds it, and renames the labels kept so far`, () => {
  const r = new RouteEndpoints();
  const counts = new Counts();
  const names = ['alice', 'bob', 'carol'];
  // The known window: before the fold, the first FOLD_AT names are labels.
  for (const u of names) counts.add(r.name('GET', `/profile/${u}`, T0));
  counts.add(r.name('GET', '/profile/alice', T0));
  assert.deepEqual([...counts.byLabel.keys()].sort(), ['GET /profile/alice', 'GET /profile/bob', 'GET /profile/carol']);
  const fold = r.name('GET', '/profile/dave', T0);
  assert.equal(fold.template, 'GET /profile/{id}');
  assert.deepEqual(new Map([...fold.renamed!].sort()), new Map(names.map((u) => [`GET /profile/${u}`, 'GET /profile/{id}'])));
  counts.add(fold);
  assert.deepEqual([...counts.byLabel], [['GET /profile/{id}', 5]]);
  // Folded for good: later names never show, and nothing more is renamed.
  const later = r.name('GET', '/profile/erin', T0);
  assert.deepEqual(later, { template: 'GET /profile/{id}', deduced: true, renamed: null });
  assert.equal(r.size, 1);
});

test('a member of a collection (after a plural word) folds on sight: no caller\'s name is ever a label there', () => {
  const r = new RouteEndpoints();
  assert.deepEqual(r.name('GET', '/users/alice', T0), { template: 'GET /users/{id}', deduced: true, renamed: null });
  assert.equal(r.name('GET', '/users/alice/profile', T0).template, 'GET /users/{id}/profile');
  assert.equal(r.name('GET', '/v1/accounts/bob/orders/pending', T0).template, 'GET /v1/accounts/{id}/orders/{id}');
  // Words that end in s without being plurals keep what follows until the fold.
  for (const [path, template] of [['/status/live', 'GET /status/live'], ['/access/rules', 'GET /access/rules'], ['/analysis/weekly', 'GET /analysis/weekly']]) {
    assert.equal(new RouteEndpoints().name('GET', path!, T0).template, template);
  }
  assert.equal(r.name('GET', '/users', T0).template, 'GET /users', 'the collection itself stays');
});

test('a fold cascades into the subtrees it merges', () => {
  const r = new RouteEndpoints();
  const counts = new Counts();
  for (const [u, tail] of [['a', 'posts'], ['b', 'settings'], ['c', 'avatar'], ['d', 'keys']]) counts.add(r.name('GET', `/users/${u}/${tail}`, T0));
  assert.deepEqual([...counts.byLabel], [['GET /users/{id}/{id}', 4]]);
  // The merge itself may put a position past FOLD_AT: four tails under three users fold too.
  const m = new RouteEndpoints();
  const merged = new Counts();
  for (const p of ['/users/a/p1', '/users/a/p2', '/users/b/p3', '/users/c/p4', '/users/d']) merged.add(m.name('GET', p, T0));
  assert.deepEqual([...merged.byLabel].sort(), [['GET /users/{id}', 1], ['GET /users/{id}/{id}', 4]]);
  // Positions under a folded one with few literals keep them.
  const s = new RouteEndpoints();
  for (const u of ['a', 'b', 'c', 'd']) s.name('GET', `/users/${u}/posts`, T0);
  assert.equal(s.name('GET', '/users/e/posts', T0).template, 'GET /users/{id}/posts');
});

test('user names never become labels once the fold saw them: a seeded random stream', () => {
  const rnd = mulberry32(7);
  const word = () => Array.from({ length: 3 + Math.floor(rnd() * 8) }, () => 'abcdefghijklmnopqrstuvwxyz'[Math.floor(rnd() * 26)]).join('');
  for (let run = 0; run < 20; run++) {
    const r = new RouteEndpoints();
    const counts = new Counts();
    const users = Array.from({ length: FOLD_AT + 1 + Math.floor(rnd() * 20) }, word);
    const called = new Set<string>();
    let calls = 0;
    for (let i = 0; i < 300; i++) {
      const u = users[Math.floor(rnd() * users.length)]!;
      const kind = rnd();
      if (kind < 0.7) called.add(u);
      const path = kind < 0.4 ? `/users/${u}` : kind < 0.7 ? `/users/${u}/orders/${Math.floor(rnd() * 1e6)}` : kind < 0.85 ? `/mail/${u}@example.org` : `/peers/10.0.${Math.floor(rnd() * 255)}.${Math.floor(rnd() * 255)}`;
      counts.add(r.name(rnd() < 0.5 ? 'GET' : 'POST', path, T0));
      calls++;
    }
    assert.ok(called.size > FOLD_AT, 'the stream called more than FOLD_AT distinct users');
    for (const label of counts.byLabel.keys()) {
      assert.ok(!label.includes('@') && !label.includes('10.0.'), label);
      for (const u of called) assert.ok(!label.split(/[ /]/).includes(u), `${label} names ${u}`);
    }
    assert.equal(counts.total(), calls, 'merging renamed labels keeps every call');
  }
});

test('a declared template beats a deduced one, and its positions are not folded', () => {
  const index = endpointIndex([{ method: 'GET', template: '/orders/{orderId}' }, { method: 'GET', template: '/users/me' }, { method: '*', template: '/health' }]);
  const r = new RouteEndpoints(index);
  assert.deepEqual(r.name('GET', '/orders/123', T0), { template: 'GET /orders/{orderId}', deduced: false, renamed: null });
  assert.deepEqual(r.name('GET', '/orders/alice', T0), { template: 'GET /orders/{orderId}', deduced: false, renamed: null });
  assert.deepEqual(r.name('POST', '/health', T0), { template: 'POST /health', deduced: false, renamed: null });
  // POST /orders/1 is not declared: deduced, in the shape the route declares for the path.
  assert.deepEqual(r.name('POST', '/orders/1', T0), { template: 'POST /orders/{orderId}', deduced: true, renamed: null });
  assert.deepEqual(r.name('PATCH', '/orders/alice', T0), { template: 'PATCH /orders/{orderId}', deduced: true, renamed: null }, 'never the name in the path');
  assert.deepEqual(r.name('POST', '/invoices/1', T0), { template: 'POST /invoices/{id}', deduced: true, renamed: null });
  for (const u of ['ann', 'ben', 'cid', 'dan']) r.name('GET', `/users/${u}`, T0);
  assert.deepEqual(r.name('GET', '/users/me', T0), { template: 'GET /users/me', deduced: false, renamed: null });
  assert.equal(r.name('GET', '/users/eve', T0).template, 'GET /users/{id}');
  r.redeclare(undefined);
  assert.equal(r.name('GET', '/orders/5', T0).template, 'GET /orders/{id}');
});

test(`a route has at most ${TEMPLATE_BUDGET} labels; past them calls share the bucket`, () => {
  const words = ['alpha', 'beta', 'gamma'];
  // 3^5 paths, never more than three literals under a parent: no fold, every one distinct.
  const paths: string[] = [];
  for (let i = 0; i < 3 ** 5; i++) paths.push('/' + Array.from({ length: 5 }, (_, k) => words[Math.floor(i / 3 ** k) % 3]).join('/'));
  const index = endpointIndex([{ method: 'GET', template: '/declared/{id}' }]);
  const r = new RouteEndpoints(index);
  assert.equal(r.name('GET', '/declared/1', T0).deduced, false);
  const labels = new Set<string>();
  let bucketed = 0;
  for (const p of paths) {
    const n = r.name('GET', p, T0);
    assert.equal(n.renamed, null);
    if (n.template === OTHER) {
      assert.equal(n.deduced, true);
      bucketed++;
    } else labels.add(n.template);
  }
  assert.equal(labels.size, TEMPLATE_BUDGET - 1, 'the declared label counts in the budget');
  assert.equal(bucketed, paths.length - (TEMPLATE_BUDGET - 1));
  assert.equal(r.size, TEMPLATE_BUDGET);
  // Labels already issued keep answering; a new declared one or a new method joins the bucket.
  assert.equal(r.name('GET', paths[0]!, T0).template, `GET ${paths[0]}`);
  assert.equal(r.name('GET', '/declared/2', T0).template, 'GET /declared/{id}');
  assert.equal(r.name('PUT', paths[0]!, T0).template, OTHER);
  // Unused labels leave the budget once swept.
  r.name('GET', paths[1]!, T0 + LABEL_TTL_MS);
  r.sweep(T0 + LABEL_TTL_MS + 1);
  assert.equal(r.size, 1);
  assert.equal(r.name('PUT', paths[0]!, T0 + LABEL_TTL_MS).template, `PUT ${paths[0]}`);
});

test('unusual methods and very deep paths go to the bucket', () => {
  const r = new RouteEndpoints();
  assert.equal(r.name('PROPFIND', '/files', T0).template, OTHER);
  assert.equal(r.name('GET', '/a'.repeat(MAX_DEPTH + 1), T0).template, OTHER);
  assert.equal(r.name('GET', '/a'.repeat(MAX_DEPTH), T0).template, `GET ${'/a'.repeat(MAX_DEPTH)}`);
});

/** Distinct literals under each path prefix, over the labels given. */
function literalsPerPosition(labels: Iterable<string>): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const label of labels) {
    if (label === OTHER) continue;
    const segments = label.slice(label.indexOf(' ') + 2).split('/');
    segments.forEach((s, i) => {
      if (s === '{id}') return;
      const parent = segments.slice(0, i).join('/');
      if (!out.has(parent)) out.set(parent, new Set());
      out.get(parent)!.add(s);
    });
  }
  return out;
}

test('whatever the paths, no position keeps more than FOLD_AT literals and every call is counted once', () => {
  const rnd = mulberry32(11);
  const r = new RouteEndpoints();
  const counts = new Counts();
  for (let i = 0; i < 20_000; i++) {
    const depth = 1 + Math.floor(rnd() * MAX_DEPTH);
    const path = Array.from({ length: depth }, () => `w${'abcdefghij'[Math.floor(rnd() * 10)]}x`).join('/');
    counts.add(r.name('GET', `/${path}`, T0));
  }
  assert.ok(r.size <= TEMPLATE_BUDGET);
  assert.equal(counts.total(), 20_000);
  for (const [parent, literals] of literalsPerPosition(counts.byLabel.keys())) assert.ok(literals.size <= FOLD_AT, `${parent}: ${[...literals]}`);
});

test('the trie stops growing at NODE_CAP: a path needing a new node is then bucketed, a fold still shrinks it', () => {
  const rnd = mulberry32(3);
  const r = new RouteEndpoints();
  const words = ['red', 'green', 'blue'];
  for (let i = 0; i < 5_000; i++) r.name('GET', '/' + Array.from({ length: MAX_DEPTH }, () => words[Math.floor(rnd() * 3)]).join('/'), T0);
  assert.equal(r.nodes, NODE_CAP);
  assert.equal(r.name('GET', '/red/123', T0).template, OTHER);
  // A fold still happens at the cap, and shrinks the trie.
  assert.equal(r.name('GET', '/other/123', T0).template, 'GET /{id}/{id}');
  assert.ok(r.nodes < NODE_CAP);
});

test('a sweep frees the nodes of the labels it forgets: after a flood of paths, new endpoints are named again', () => {
  const words = ['alpha', 'beta', 'gamma'];
  const r = new RouteEndpoints();
  // 3^7 word-only paths: never more than three literals under a parent, so nothing folds and the trie fills.
  for (let i = 0; i < 3 ** 7; i++) r.name('GET', '/' + Array.from({ length: 7 }, (_, k) => words[Math.floor(i / 3 ** k) % 3]).join('/'), T0);
  assert.equal(r.nodes, NODE_CAP);
  const deeper = '/alpha/alpha/alpha/alpha/alpha/alpha/alpha/extra';
  assert.equal(r.name('GET', deeper, T0).template, OTHER, 'a new node is needed, and there is none');
  // A label still in use keeps its nodes; the flood's are freed once its labels are swept.
  r.name('GET', '/alpha/alpha/alpha/alpha/alpha/alpha/alpha', T0 + LABEL_TTL_MS);
  r.sweep(T0 + LABEL_TTL_MS + 1);
  assert.equal(r.size, 1);
  assert.equal(r.nodes, 8, 'the root and the seven nodes of the label kept');
  const later = T0 + LABEL_TTL_MS + 2;
  assert.equal(r.name('GET', deeper, later).template, `GET ${deeper}`);
  assert.equal(r.name('GET', '/orders', later).template, 'GET /orders');
  assert.equal(r.name('GET', '/orders/42', later).template, 'GET /orders/{id}');
  assert.equal(r.name('GET', '/alpha/alpha/alpha/alpha/alpha/alpha/alpha', later).template, 'GET /alpha/alpha/alpha/alpha/alpha/alpha/alpha');
});

test('a fold outlives the labels under it: after a quiet hour the next name is still {id}', () => {
  const r = new RouteEndpoints();
  for (const u of ['bob', 'carol', 'dave', 'erin']) r.name('GET', `/people/${u}`, T0);
  assert.equal(r.name('GET', '/people/frank', T0).template, 'GET /people/{id}');
  r.sweep(T0 + LABEL_TTL_MS + 1);
  assert.equal(r.size, 0, 'every label was swept');
  assert.equal(r.name('GET', '/people/eve', T0 + LABEL_TTL_MS + 2).template, 'GET /people/{id}');
});

test('a sweep keeps the folds: a position folded stays {id} for the labels that remain and the paths that come', () => {
  const r = new RouteEndpoints();
  for (const u of ['ann', 'bob', 'cat', 'dan']) r.name('GET', `/users/${u}/orders`, T0);
  assert.equal(r.name('GET', '/users/eve/orders', T0 + LABEL_TTL_MS).template, 'GET /users/{id}/orders');
  r.name('GET', '/health', T0);
  r.sweep(T0 + LABEL_TTL_MS + 1);
  assert.equal(r.size, 1);
  assert.equal(r.name('GET', '/users/fay/orders', T0 + LABEL_TTL_MS + 2).template, 'GET /users/{id}/orders');
});

test('the labels of several nodes fold together as one node would fold them: never FOLD_AT words per node at a position', () => {
  // Each node saw three names at the position and kept them as words; together they are six.
  const a = new RouteEndpoints();
  const b = new RouteEndpoints();
  const labels = [
    ...['alice', 'bob', 'carol'].map((u) => a.name('GET', `/pp/people/${u}`, T0).template),
    ...['dave', 'erin', 'frank'].map((u) => b.name('GET', `/pp/people/${u}`, T0).template),
    a.name('GET', '/pp/orders/7', T0).template,
    b.name('GET', '/pp/status', T0).template,
    OTHER,
  ];
  assert.ok(labels.includes('GET /pp/people/alice') && labels.includes('GET /pp/people/frank'), 'each node on its own keeps words');
  const fold = foldAcross(labels);
  for (const u of ['alice', 'bob', 'carol', 'dave', 'erin', 'frank']) assert.equal(fold.get(`GET /pp/people/${u}`), 'GET /pp/people/{id}', u);
  assert.equal(fold.get('GET /pp/orders/{id}'), 'GET /pp/orders/{id}');
  assert.equal(fold.get('GET /pp/status'), 'GET /pp/status');
  assert.equal(fold.has(OTHER), false, 'the bucket is no path');
  // Three words across the nodes are still words, as on one node.
  const few = foldAcross(['GET /q/alpha', 'GET /q/beta', 'GET /q/gamma']);
  assert.deepEqual([...few.values()], ['GET /q/alpha', 'GET /q/beta', 'GET /q/gamma']);
});
