/**
 * The run history and the schedules list answer JSON arrays, paged by an opaque cursor carried in
 * a `Link: <…>; rel="next"` header (CONTRACT.md "Schedules"). Followed page by page, they give
 * every record exactly once, even when records share a second or filters drop rows.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../helpers/gateway.ts';
import type { Admin } from '../helpers/admin.ts';
import { call, type Answer } from '../helpers/http.ts';
import { advanceClock, schedulingStand } from '../helpers/scheduler.ts';
import type { Upstream } from '../helpers/upstream.ts';

let t: TestGateway;
let root: Admin;
let up: Upstream;
const tokens: Record<string, string> = {};

before(async () => {
  ({ t, up, root } = await schedulingStand());
  await root.put('/api/roles/jobs', {});
  await root.put('/api/routes/billing', { upstream: `${up.origin}/svc`, paths: ['/billing'], rule: { roles: ['jobs'] } });
  await root.put('/api/routes/orders', { upstream: `${up.origin}/svc`, paths: ['/orders'], rule: { roles: ['jobs'] } });
  await root.put('/api/organisations/acme', { name: 'Acme' });
  for (const name of ['runs-svc', 'list-svc', 'other-svc', 'refusals-svc']) {
    tokens[name] = (await root.post('/api/tokens', { name, kind: 'schedules', routes: ['billing', 'orders'], roles: ['jobs'], organisations: ['acme'] })).json.token;
  }
});
after(async () => {
  await t?.close();
  await up?.close();
});

/** GET on the internal plane with one token's credentials, or on the control plane as the console. */
const as = (who: string | Admin) => (path: string): Promise<Answer> =>
  typeof who === 'string'
    ? call(`${t.url('internal')}${path}`, { headers: { authorization: `Bearer ${tokens[who]!}` } })
    : who.get(path);
const post = (who: string, path: string, body?: unknown) =>
  call(`${t.url('internal')}${path}`, { method: 'POST', headers: { authorization: `Bearer ${tokens[who]!}` }, ...(body !== undefined ? { body } : {}) });

/** The next page's path and query, from a Link header; null when there is none. */
function nextOf(a: Answer, called: string): string | null {
  const link = a.headers.link;
  if (link === undefined) return null;
  assert.equal(typeof link, 'string', 'one Link header');
  const m = /^<([^>]+)>; rel="next"$/.exec(String(link));
  assert.ok(m, `a next link: ${String(link)}`);
  assert.ok(m[1]!.startsWith('/api/schedules'), `a reference relative to the plane: ${m[1]}`);
  const url = new URL(m[1]!, `http://plane${called}`);
  return `${url.pathname}${url.search}`;
}

/** Follows Link from `first` until there is none: every page's items, in order. */
async function follow(get: (path: string) => Promise<Answer>, first: string, limit: number): Promise<{ ids: string[]; pages: number[]; links: string[] }> {
  const ids: string[] = [];
  const pages: number[] = [];
  const links: string[] = [];
  for (let path: string | null = first; path !== null;) {
    const a = await get(path);
    assert.equal(a.status, 200, a.text);
    assert.ok(Array.isArray(a.json), `a JSON array: ${a.text.slice(0, 200)}`);
    assert.ok(a.json.length <= limit);
    ids.push(...a.json.map((x: { id: string }) => x.id));
    pages.push(a.json.length);
    path = nextOf(a, path);
    if (path !== null) links.push(path);
    assert.ok(pages.length < 100, 'paging ends');
  }
  return { ids, pages, links };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((res) => setTimeout(res, 25));
  }
  assert.fail(`timed out waiting for ${what}`);
}

/** Run now, then wait until the history holds `count` records (the clock does not move). */
async function runOnce(who: string, id: string, count: number): Promise<void> {
  const asked = await post(who, `/api/schedules/${id}/run`);
  assert.equal(asked.status, 202, asked.text);
  await until(`run ${count} of ${id}`, async () => {
    const a = await as(who)(`/api/schedules/${id}/runs?limit=500`);
    return a.json.length >= count ? true : undefined;
  });
  // The schedule's own record follows the history row in the same write; wait for the flight to clear.
  await until(`no run of ${id} in flight`, async () => ((await as(who)(`/api/schedules/${id}`)).json.inFlight === null ? true : undefined));
}

test('runs ending within the same second page through Link: each once, newest first, and a run written meanwhile shifts nothing', async () => {
  up.handle(undefined);
  const s = (await post('runs-svc', '/api/schedules', { routeId: 'billing', path: '/billing/close', every: 'PT1H', roles: ['jobs'] })).json;
  assert.ok(s.id, JSON.stringify(s));
  for (let i = 1; i <= 7; i++) await runOnce('runs-svc', s.id, i);

  const whole = await as('runs-svc')(`/api/schedules/${s.id}/runs`);
  assert.equal(whole.status, 200);
  assert.equal(whole.headers.link, undefined, 'everything fits the default page: no Link');
  const all = whole.json as Array<{ id: string; endedAt: number; state: string }>;
  assert.equal(all.length, 7);
  assert.equal(new Set(all.map((r) => r.endedAt)).size, 1, 'every run ended within the same test-clock second');
  assert.deepEqual(all.map((r) => r.id), all.map((r) => r.id).sort().reverse(), 'newest first: the history id descending');
  assert.ok(all.every((r) => r.state === 'done'));

  for (const get of [as('runs-svc'), as(root)]) {
    const paged = await follow(get, `/api/schedules/${s.id}/runs?limit=2`, 2);
    assert.deepEqual(paged.ids, all.map((r) => r.id), 'every record exactly once, in order');
    assert.deepEqual(paged.pages, [2, 2, 2, 1]);
    for (const link of paged.links) assert.match(link, new RegExp(`^/api/schedules/${s.id}/runs\\?limit=2&cursor=[A-Za-z0-9_-]+$`));
  }

  // A page exactly full at the end of the history names no next page.
  const exact = await as('runs-svc')(`/api/schedules/${s.id}/runs?limit=7`);
  assert.equal(exact.json.length, 7);
  assert.equal(exact.headers.link, undefined);

  // A run written between two pages is newer than the cursor: the pages after it stay the same.
  const first = await as('runs-svc')(`/api/schedules/${s.id}/runs?limit=3`);
  await runOnce('runs-svc', s.id, 8);
  const rest = await follow(as('runs-svc'), nextOf(first, `/api/schedules/${s.id}/runs?limit=3`)!, 3);
  assert.deepEqual([...first.json.map((r: { id: string }) => r.id), ...rest.ids], all.map((r) => r.id));
});

test('the schedules list pages through Link with its filters, rows dropped between pages, oldest first', async () => {
  // Two creation instants, several schedules in each: the order is createdAt, then id.
  const made: Array<{ id: string; createdAt: number; env: string; organisation: string | null; routeId: string }> = [];
  for (let i = 0; i < 14; i++) {
    if (i === 7) await advanceClock(t.url('control'), 'PT1M');
    const env = i % 3 === 0 ? 'staging' : `prod-${i}`;
    const organisation = i % 2 === 0 ? 'acme' : null;
    const routeId = i % 5 === 4 ? 'orders' : 'billing';
    const c = await post('list-svc', '/api/schedules', { routeId, path: `/${routeId}/job`, every: 'PT1H', roles: ['jobs'], metadata: { env }, ...(organisation ? { organisation } : {}) });
    assert.equal(c.status, 201, c.text);
    made.push({ id: c.json.id, createdAt: c.json.createdAt, env, organisation, routeId });
  }
  assert.equal(new Set(made.map((m) => m.createdAt)).size, 2);
  const order = [...made].sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

  const cases: Array<[string, (m: (typeof made)[number]) => boolean]> = [
    ['', () => true],
    [`meta.env=${encodeURIComponent('~^prod-')}`, (m) => m.env.startsWith('prod-')],
    [`tenant=acme&meta.env=${encodeURIComponent('~^prod-')}`, (m) => m.organisation === 'acme' && m.env.startsWith('prod-')],
    ['route=billing&meta.env=staging', (m) => m.routeId === 'billing' && m.env === 'staging'],
    ['route=orders', (m) => m.routeId === 'orders'],
  ];
  for (const [filters, holds] of cases) {
    const want = order.filter(holds).map((m) => m.id);
    assert.ok(want.length >= 2, `${filters}: enough rows to page`);
    const whole = await as('list-svc')(`/api/schedules${filters ? `?${filters}` : ''}`);
    assert.deepEqual(whole.json.map((s: { id: string }) => s.id), want, `${filters}: one page, oldest first`);
    assert.equal(whole.headers.link, undefined);
    for (const limit of [1, 2, 3]) {
      const paged = await follow(as('list-svc'), `/api/schedules?${filters ? `${filters}&` : ''}limit=${limit}`, limit);
      assert.deepEqual(paged.ids, want, `${filters}, limit ${limit}: every schedule exactly once, in order`);
      assert.equal(paged.pages.length, Math.ceil(want.length / limit), `${filters}, limit ${limit}: no empty last page`);
      for (const link of paged.links) {
        const q = new URLSearchParams(link.slice(link.indexOf('?') + 1));
        for (const [k, v] of new URLSearchParams(filters)) assert.equal(q.get(k), v, `${link} keeps ${k}`);
        assert.equal(q.get('limit'), String(limit));
      }
    }
  }
});

test('a schedules token pages only its own schedules; the console pages through every one', async () => {
  const mine: string[] = [];
  const theirs: string[] = [];
  // Written at the same instant and interleaved, so both tokens' rows sit between each other's.
  for (let i = 0; i < 4; i++) {
    mine.push((await post('other-svc', '/api/schedules', { routeId: 'billing', path: '/billing/mine', every: 'PT1H', roles: ['jobs'] })).json.id);
    theirs.push((await post('refusals-svc', '/api/schedules', { routeId: 'billing', path: '/billing/theirs', every: 'PT1H', roles: ['jobs'] })).json.id);
  }
  const own = await follow(as('other-svc'), '/api/schedules?limit=1', 1);
  assert.deepEqual(own.ids, [...mine].sort(), 'only its own, each once');
  assert.equal(own.pages.length, 4);

  // A cursor taken from another token's page only says where to start: it shows nothing of theirs.
  const foreign = nextOf(await as('refusals-svc')('/api/schedules?limit=1'), '/api/schedules?limit=1')!;
  const fromThere = await follow(as('other-svc'), foreign, 1);
  assert.ok(fromThere.ids.every((id) => mine.includes(id)), 'another token\'s cursor opens nothing of theirs');

  const every = await follow(as(root), '/api/schedules?limit=5', 5);
  assert.equal(new Set(every.ids).size, every.ids.length, 'each once');
  for (const id of [...mine, ...theirs]) assert.ok(every.ids.includes(id), `the console sees ${id}`);
  const unpaged = (await as(root)('/api/schedules?limit=1000')).json.map((s: { id: string }) => s.id);
  assert.deepEqual(every.ids, unpaged, 'the same order paged or not');
});

test('a cursor or a limit the list did not give is refused with its code and field', async () => {
  const s = (await post('refusals-svc', '/api/schedules', { routeId: 'billing', path: '/billing/refusals', every: 'PT1H', roles: ['jobs'] })).json;
  const listLink = nextOf(await as('refusals-svc')('/api/schedules?limit=1'), '/api/schedules?limit=1')!;
  const listCursor = new URLSearchParams(listLink.split('?')[1]).get('cursor')!;
  const refused = (a: Answer, code: string, field: string, detail: RegExp) => {
    assert.equal(a.status, 400, a.text);
    assert.match(String(a.headers['content-type']), /^application\/problem\+json/);
    assert.equal(a.json.code, code, a.text);
    assert.equal(a.json.field, field, a.text);
    assert.match(a.json.detail, detail);
  };
  for (const get of [as('refusals-svc'), as(root)]) {
    for (const bad of ['garbage!', '', 'eyJ4Ijox', listCursor.slice(0, -2), `${listCursor}A`]) {
      refused(await get(`/api/schedules?cursor=${encodeURIComponent(bad)}`), 'cursor.invalid', 'cursor', /not one this list gave/);
      refused(await get(`/api/schedules/${s.id}/runs?cursor=${encodeURIComponent(bad)}`), 'cursor.invalid', 'cursor', /not one this list gave/);
    }
    refused(await get(`/api/schedules/${s.id}/runs?cursor=${listCursor}`), 'cursor.invalid', 'cursor', /not one this list gave/);
    refused(await get('/api/schedules?limit=0'), 'field.invalid', 'limit', /1 to 1000/);
    refused(await get('/api/schedules?limit=1001'), 'field.invalid', 'limit', /1 to 1000/);
    refused(await get(`/api/schedules/${s.id}/runs?limit=501`), 'field.invalid', 'limit', /1 to 500/);
    refused(await get(`/api/schedules?cursor=${listCursor}&cursor=${listCursor}`), 'field.invalid', 'cursor', /once/);
    refused(await get(`/api/schedules/${s.id}/runs?before=1795402080`), 'field.invalid', 'before', /Link header/);
    refused(await get(`/api/schedules/${s.id}/runs?offset=2`), 'field.invalid', 'offset', /limit and cursor/);
  }
  assert.equal((await as('refusals-svc')(`/api/schedules?cursor=${listCursor}`)).status, 200, 'the cursor the list gave is taken');
});
