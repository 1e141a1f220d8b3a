/**
 * History retention (spec 1.1 rules 21 and 36): a month by default, set by root; run records
 * older than it and delayed actions finished before it are swept, with their history.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../helpers/gateway.ts';
import { signInAdmin, type Admin } from '../helpers/admin.ts';
import { call } from '../helpers/http.ts';
import { advanceClock, internalWith, schedulingStand, schedulesToken } from '../helpers/scheduler.ts';
import type { Upstream } from '../helpers/upstream.ts';

let t: TestGateway;
let root: Admin;
let up: Upstream;
let token: string;

before(async () => {
  ({ t, up, root } = await schedulingStand());
  await root.put('/api/roles/jobs', {});
  await root.put('/api/routes/billing', { upstream: `${up.origin}/svc`, paths: ['/billing'], rule: { roles: ['jobs'] } });
  token = await schedulesToken(root, 'billing-svc', ['billing'], ['jobs']);
});
after(async () => {
  await t?.close();
  await up?.close();
});

const internal = internalWith(() => t.url('internal'), () => token);
const advance = (by: string) => advanceClock(t.url('control'), by);
const clockNow = async () => (await call(`${t.url('control')}/__clock`)).json.now as number;
const DAY = 86_400_000;

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((res) => setTimeout(res, 25));
  }
  assert.fail(`timed out waiting for ${what}`);
}

test('the retention reads a month by default; root alone sets it, in days, one day to five years', async () => {
  const got = await root.get('/api/settings/schedules');
  assert.equal(got.status, 200);
  assert.deepEqual(got.json, { retention: 'P30D', maxSchedules: 10_000, updatedAt: null, updatedBy: null });

  await root.post('/api/accounts', { name: 'appadmin', password: 'appadmin-password', capabilities: ['app-admin'] });
  const appAdmin = await signInAdmin(t.url('control'), 'appadmin', 'appadmin-password');
  assert.equal((await appAdmin.get('/api/settings/schedules')).status, 200, 'the console reads it');
  const refused = await appAdmin.put('/api/settings/schedules', { retention: 'P7D' });
  assert.equal(refused.status, 403);
  assert.equal(refused.json.code, 'capability');

  for (const [retention, pattern] of [
    ['P0D', /one day \(P1D\) to five years/],
    ['P1826D', /one day \(P1D\) to five years/],
    ['P1M', /months are refused/],
    ['PT36H', /whole days/],
    ['soon', /not a duration/],
    [30, /not a duration/],
  ] as const) {
    const a = await root.put('/api/settings/schedules', { retention });
    assert.equal(a.status, 400, String(retention));
    assert.equal(a.json.code, 'field.invalid');
    assert.equal(a.json.field, 'retention');
    assert.match(a.json.detail, pattern);
  }
  const extra = await root.put('/api/settings/schedules', { retention: 'P30D', history: true });
  assert.equal(extra.status, 400);
  assert.equal(extra.json.field, 'history');
  assert.deepEqual((await root.get('/api/settings/schedules')).json.updatedAt, null, 'nothing was stored by a refusal');
});

test('a finished delayed action keeps its result for the retention, then goes with its history', async () => {
  const now = await clockNow();
  const at = new Date(now + 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
  const s = (await internal('POST', '/api/schedules', { routeId: 'billing', path: '/billing/once', at, roles: ['jobs'] })).json;
  assert.ok(s.id, JSON.stringify(s));
  await advance('PT2M');
  await until('the delayed action to finish', async () => {
    const g = (await internal('GET', `/api/schedules/${s.id}`)).json;
    return g.finished ? g : undefined;
  });
  assert.equal((await internal('GET', `/api/schedules/${s.id}/runs`)).json.length, 1);

  // 29 days on: the hourly sweep has looked and kept it; a sweep forced now keeps it too.
  await advance('P29D');
  root = await signInAdmin(t.url('control')); // the console session ran out meanwhile
  const kept = await root.put('/api/settings/schedules', { retention: 'P30D' });
  assert.equal(kept.status, 200);
  assert.equal(kept.json.retention, 'P30D');
  assert.equal(kept.json.updatedBy, 'account:root');
  assert.equal(kept.json.updatedAt, Math.floor((await clockNow()) / 1000));
  assert.equal((await internal('GET', `/api/schedules/${s.id}`)).status, 200, 'still on screen within the retention');

  // Past the month, the hourly sweep (on the test clock) removes it and its history.
  await advance('P2D');
  await until('the sweep to remove the finished action', async () => ((await internal('GET', `/api/schedules/${s.id}`)).status === 404 ? true : undefined));
  assert.equal((await internal('GET', `/api/schedules/${s.id}/runs`)).status, 404);
  assert.ok(t.logs.some((r) => r.msg === 'history swept' && Number(r.attrs?.finishedSchedules) >= 1), 'the sweep says what it removed');
});

test('a shorter retention sweeps older run records at once; newer ones and the schedule stay', async () => {
  const s = (await internal('POST', '/api/schedules', { routeId: 'billing', path: '/billing/tick', every: 'PT6H', roles: ['jobs'], catchUp: 0 })).json;
  assert.ok(s.id, JSON.stringify(s));
  // Six turns, six hours apart: history spans a day and a half.
  for (let i = 1; i <= 6; i++) {
    await advance('PT6H');
    await until(`run ${i}`, async () => {
      const runs = (await internal('GET', `/api/schedules/${s.id}/runs`)).json as unknown[];
      return runs.length >= i ? runs : undefined;
    });
  }
  // An hour more, so no record sits exactly on the line.
  await advance('PT1H');
  const runs = (await internal('GET', `/api/schedules/${s.id}/runs`)).json as Array<{ id: string; endedAt: number }>;
  const line = (await clockNow()) - DAY;
  const survivors = runs.filter((r) => r.endedAt * 1000 >= line).map((r) => r.id);
  assert.ok(survivors.length > 0 && survivors.length < runs.length, `the history (${runs.length}) straddles the one-day line`);

  root = await signInAdmin(t.url('control'));
  const set = await root.put('/api/settings/schedules', { retention: 'P1D' });
  assert.equal(set.status, 200);
  assert.equal(set.json.retention, 'P1D');
  const after = (await internal('GET', `/api/schedules/${s.id}/runs`)).json as Array<{ id: string }>;
  assert.deepEqual(after.map((r) => r.id), survivors, 'exactly the records older than a day are gone');
  assert.equal((await internal('GET', `/api/schedules/${s.id}`)).status, 200, 'a recurring schedule is never swept');
  await root.put('/api/settings/schedules', { retention: 'P30D' });
});

test('deleting a schedule deletes its history', async () => {
  const s = (await internal('POST', '/api/schedules', { routeId: 'billing', path: '/billing/x', every: 'PT1H', roles: ['jobs'] })).json;
  await advance('PT1H');
  await until('a run', async () => ((await internal('GET', `/api/schedules/${s.id}/runs`)).json?.length ? true : undefined));
  assert.equal((await internal('DELETE', `/api/schedules/${s.id}`)).status, 204);
  assert.equal((await internal('GET', `/api/schedules/${s.id}/runs`)).status, 404);
});
