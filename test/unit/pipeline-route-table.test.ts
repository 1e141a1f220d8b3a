import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RouteView } from '../../src/core/model.ts';
import { RouteTable, type RouteMatch } from '../../src/pipeline/route-table.ts';
import { mulberry32 } from '../helpers/random.ts';

function route(id: string, paths: string[], more: Partial<RouteView> = {}): RouteView {
  return {
    id, upstream: 'http://upstream:8080', paths, hosts: [], stripPrefix: false, rule: null, endpointRules: [],
    identity: 'headers', timeoutMs: 30_000, organisation: null, ...more,
  };
}

function summary(m: RouteMatch | undefined): [string, string, string, string] | undefined {
  return m === undefined ? undefined : [m.route.id, m.prefix, m.servicePath, m.upstreamPath];
}

test('prefixes match on segment boundaries only', () => {
  const t = new RouteTable([route('api', ['/api']), route('slash', ['/docs/'])]);
  assert.equal(t.match(undefined, '/api')?.route.id, 'api');
  assert.equal(t.match(undefined, '/api/')?.route.id, 'api');
  assert.equal(t.match(undefined, '/api/x/y')?.route.id, 'api');
  assert.equal(t.match(undefined, '/apix'), undefined);
  assert.equal(t.match(undefined, '/ap'), undefined);
  assert.equal(t.match(undefined, '/docs/')?.route.id, 'slash');
  assert.equal(t.match(undefined, '/docs/a')?.route.id, 'slash');
  assert.equal(t.match(undefined, '/docs'), undefined);
  assert.equal(t.match(undefined, '/docsx'), undefined);
  // A segment's ';' parameters are not part of it: servlet containers serve /api;x as /api.
  assert.equal(t.match(undefined, '/api;jsessionid=1')?.route.id, 'api');
  assert.equal(t.match(undefined, '/api;x/y')?.route.id, 'api');
  assert.equal(t.match(undefined, '/apix;x'), undefined);
});

test("'/' matches every path, and the longest prefix wins across routes", () => {
  const t = new RouteTable([route('root', ['/']), route('a', ['/a']), route('ab', ['/a/b', '/zzz'])]);
  assert.equal(t.match(undefined, '/')?.route.id, 'root');
  assert.equal(t.match(undefined, '/x')?.route.id, 'root');
  assert.equal(t.match(undefined, '/a/x')?.route.id, 'a');
  assert.equal(t.match(undefined, '/a/b/c')?.route.id, 'ab');
  assert.equal(t.match(undefined, '/a/bc')?.route.id, 'a');
  assert.equal(t.match(undefined, 'a'), undefined, 'a path not starting with / matches nothing');
  assert.equal(t.match(undefined, ''), undefined);
});

test('hosts: case, port and IPv6 are normalised; a named host beats a host-less route on equal length', () => {
  const t = new RouteTable([
    route('any', ['/api']),
    route('named', ['/api'], { hosts: ['shop.example.com'] }),
    route('v6', ['/api'], { hosts: ['::1'] }),
    route('longer-any', ['/api/v2']),
  ]);
  assert.equal(t.match('shop.example.com', '/api/x')?.route.id, 'named');
  assert.equal(t.match('SHOP.Example.COM:8443', '/api/x')?.route.id, 'named');
  assert.equal(t.match('shop.example.com.', '/api/x')?.route.id, 'named');
  assert.equal(t.match('[::1]:8080', '/api')?.route.id, 'v6');
  assert.equal(t.match('[::1]', '/api')?.route.id, 'v6');
  assert.equal(t.match('other.example.com', '/api/x')?.route.id, 'any');
  assert.equal(t.match(undefined, '/api/x')?.route.id, 'any');
  assert.equal(t.match('', '/api/x')?.route.id, 'any');
  // Longest prefix first, even over a host-named route.
  assert.equal(t.match('shop.example.com', '/api/v2/x')?.route.id, 'longer-any');
});

test('a route naming hosts is never a candidate for other hosts', () => {
  const t = new RouteTable([route('only', ['/'], { hosts: ['a.example'] })]);
  assert.equal(t.match('b.example', '/x'), undefined);
  assert.equal(t.match(undefined, '/x'), undefined);
  assert.equal(t.match('A.EXAMPLE:80', '/x')?.route.id, 'only');
});

test('equal prefix and host standing: the smaller route id wins, whatever the input order', () => {
  const routes = [route('b', ['/x']), route('a', ['/x']), route('c', ['/x'])];
  assert.equal(new RouteTable(routes).match(undefined, '/x')?.route.id, 'a');
  assert.equal(new RouteTable([...routes].reverse()).match(undefined, '/x')?.route.id, 'a');
});

test('stripPrefix and the upstream base path', () => {
  const t = new RouteTable([
    route('strip', ['/api'], { stripPrefix: true, upstream: 'http://u:1/base/' }),
    route('strip-slash', ['/s/'], { stripPrefix: true, upstream: 'https://u' }),
    route('keep', ['/keep'], { upstream: 'http://u/v1' }),
    route('root', ['/'], { stripPrefix: true, upstream: 'http://u/' }),
  ]);
  assert.deepEqual(summary(t.match(undefined, '/api/x')), ['strip', '/api', '/x', '/base/x']);
  assert.deepEqual(summary(t.match(undefined, '/api')), ['strip', '/api', '/', '/base/']);
  assert.deepEqual(summary(t.match(undefined, '/api/')), ['strip', '/api', '/', '/base/']);
  assert.deepEqual(summary(t.match(undefined, '/api//x')), ['strip', '/api', '//x', '/base//x']);
  assert.deepEqual(summary(t.match(undefined, '/s/x/y')), ['strip-slash', '/s/', '/x/y', '/x/y']);
  assert.deepEqual(summary(t.match(undefined, '/s/')), ['strip-slash', '/s/', '/', '/']);
  assert.deepEqual(summary(t.match(undefined, '/keep/a%20b')), ['keep', '/keep', '/keep/a%20b', '/v1/keep/a%20b']);
  assert.deepEqual(summary(t.match(undefined, '/other')), ['root', '/', '/other', '/other']);
  assert.deepEqual(summary(t.match(undefined, '/')), ['root', '/', '/', '/']);
  assert.deepEqual(summary(t.match(undefined, '/api;x/y;z')), ['strip', '/api', '/y;z', '/base/y;z'], 'the stripped segment\'s parameters go with it');
  assert.deepEqual(summary(t.match(undefined, '/api;x')), ['strip', '/api', '/', '/base/']);
  assert.deepEqual(summary(t.match(undefined, '/keep;v=2/a')), ['keep', '/keep', '/keep;v=2/a', '/v1/keep;v=2/a']);
});

test('an empty table matches nothing; an unparsable upstream is refused at construction', () => {
  assert.equal(new RouteTable([]).match('x', '/'), undefined);
  assert.throws(() => new RouteTable([route('bad', ['/'], { upstream: 'not a url' })]), /bad/);
});

// ---------------------------------------------------------------------------
// Property: the table agrees with a brute-force reading of the rules.


const PREFIXES = ['/', '/a', '/a/', '/a/b', '/a/b/', '/ab', '/a/bc', '/b', '/b/c/d', '/a/b/c'];
const HOSTS = ['x.test', 'y.test', '::1'];
const RAW_HOSTS: (string | undefined)[] = [undefined, 'x.test', 'X.Test:8080', 'y.test', 'Y.TEST.', 'z.test', '[::1]:80', '[::1]'];
const UPSTREAMS = ['http://u', 'http://u/', 'http://u/base', 'http://u/base/', 'https://u:8443/v1/v2'];
const SEGMENTS = ['a', 'b', 'c', 'd', 'ab', 'bc', '', 'x%2F', 'a;x', 'b;p=1;q'];

function oracleHost(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const h = new URL(`http://${raw}`).hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
  return h;
}

function oracle(routes: readonly RouteView[], rawHost: string | undefined, path: string): [string, string, string, string] | undefined {
  const host = oracleHost(rawHost);
  let best: { r: RouteView; p: string; named: boolean } | undefined;
  for (const r of routes) {
    const named = r.hosts.length > 0;
    if (named && (host === undefined || !r.hosts.includes(host))) continue;
    for (const p of r.paths) {
      const ok = path === p || (path.startsWith(p) && (p.endsWith('/') || path[p.length] === '/' || path[p.length] === ';'));
      if (!ok) continue;
      const better = best === undefined
        || p.length > best.p.length
        || (p.length === best.p.length && named && !best.named)
        || (p.length === best.p.length && named === best.named && r.id < best.r.id);
      if (better) best = { r, p, named };
    }
  }
  if (best === undefined) return undefined;
  let service = path;
  if (best.r.stripPrefix) {
    service = path.slice(best.p.length);
    if (!best.p.endsWith('/') && service.startsWith(';')) {
      const next = service.indexOf('/');
      service = next < 0 ? '' : service.slice(next);
    }
    if (!service.startsWith('/')) service = `/${service}`;
  }
  const base = new URL(best.r.upstream).pathname.replace(/\/+$/, '');
  return [best.r.id, best.p, service, `${base}${service}`];
}

/**
 * `queries` random requests (paths of up to `depth - 1` segments, some with a trailing slash, each
 * host form) to a table of `routes`, each answer compared with the oracle's; how many matched.
 */
function askOracle(routes: readonly RouteView[], rnd: () => number, queries: number, depth: number, table: () => string): number {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)]!;
  const t = new RouteTable(routes);
  let matched = 0;
  for (let q = 0; q < queries; q++) {
    const segs = Array.from({ length: Math.floor(rnd() * depth) }, () => pick(SEGMENTS));
    const path = `/${segs.join('/')}${rnd() < 0.2 ? '/' : ''}`;
    const host = pick(RAW_HOSTS);
    const expected = oracle(routes, host, path);
    assert.deepEqual(summary(t.match(host, path)), expected, `host ${host} path ${path} ${table()}`);
    if (expected !== undefined) matched++;
  }
  return matched;
}

test('property: matches agree with a brute-force oracle over random tables and paths', () => {
  const rnd = mulberry32(20_240_611);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)]!;
  let matched = 0;
  for (let table = 0; table < 300; table++) {
    const routes: RouteView[] = [];
    const count = 1 + Math.floor(rnd() * 6);
    for (let i = 0; i < count; i++) {
      const paths = [...new Set(Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => pick(PREFIXES)))];
      const hosts = rnd() < 0.5 ? [] : [...new Set(Array.from({ length: 1 + Math.floor(rnd() * 2) }, () => pick(HOSTS)))];
      routes.push(route(`r${Math.floor(rnd() * 10)}${i}`, paths, { hosts, stripPrefix: rnd() < 0.5, upstream: pick(UPSTREAMS) }));
    }
    matched += askOracle(routes, rnd, 20, 4, () => JSON.stringify(routes.map((r) => [r.id, r.paths, r.hosts])));
  }
  assert.ok(matched > 2_000, `the generator should mostly produce matching requests (${matched})`);
});

test('property: tables of many routes, whose prefixes are indexed, agree with the same oracle', () => {
  const rnd = mulberry32(20_261_127);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)]!;
  // Prefixes of up to four segments, some with a trailing slash, some with empty segments ("//").
  const prefix = (): string => {
    const segs = Array.from({ length: Math.floor(rnd() * 5) }, () => pick(SEGMENTS));
    const p = `/${segs.join('/')}`;
    return p !== '/' && rnd() < 0.25 ? `${p}/` : p;
  };
  let matched = 0;
  for (let table = 0; table < 60; table++) {
    const routes: RouteView[] = [];
    const count = 30 + Math.floor(rnd() * 90);
    for (let i = 0; i < count; i++) {
      const paths = [...new Set(Array.from({ length: 1 + Math.floor(rnd() * 3) }, prefix))];
      const hosts = rnd() < 0.7 ? [] : [...new Set(Array.from({ length: 1 + Math.floor(rnd() * 2) }, () => pick(HOSTS)))];
      routes.push(route(`r${Math.floor(rnd() * 100)}-${i}`, paths, { hosts, stripPrefix: rnd() < 0.5, upstream: pick(UPSTREAMS) }));
    }
    matched += askOracle(routes, rnd, 100, 6, () => `table ${table}`);
  }
  assert.ok(matched > 3_000, `the generator should mostly produce matching requests (${matched})`);
});
