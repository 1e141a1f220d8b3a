/**
 * How many schedules one token may hold (CONTRACT.md leaves the number open; docs/schedules.md
 * "Schedules per token"): ten thousand by default, set by root. Without a bound, one schedules
 * token turns each API call into a call a minute to the services, forever. A write past the bound
 * answers 409 and stores nothing; finished delayed actions do not count until they could fire again.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../helpers/gateway.ts';
import { signInAdmin, type Admin } from '../helpers/admin.ts';
import { call } from '../helpers/http.ts';
import { advanceClock, internalWith, schedulingStand, schedulesToken } from '../helpers/scheduler.ts';
import type { Upstream } from '../helpers/upstream.ts';
import { until } from '../helpers/until.ts';

let t: TestGateway;
let root: Admin;
let up: Upstream;
let first: string;
let second: string;

before(async () => {
  ({ t, up, root } = await schedulingStand());
  await root.put('/api/roles/jobs', {});
  await root.put('/api/routes/billing', { upstream: `${up.origin}/svc`, paths: ['/billing'], rule: { roles: ['jobs'] } });
  first = await schedulesToken(root, 'billing-svc', ['billing'], ['jobs']);
  second = await schedulesToken(root, 'reports-svc', ['billing'], ['jobs']);
});
after(async () => {
  await t?.close();
  await up?.close();
});

const asFirst = internalWith(() => t.url('internal'), () => first);
const asSecond = internalWith(() => t.url('internal'), () => second);
const clockNow = async () => (await call(`${t.url('control')}/__clock`)).json.now as number;
const every = (path: string) => ({ routeId: 'billing', path, every: 'PT1H', roles: ['jobs'] });

async function held(as: typeof asFirst): Promise<Array<{ id: string; finished: boolean }>> {
  const list = await as('GET', '/api/schedules?limit=100');
  assert.equal(list.status, 200, list.text);
  return list.json;
}

test('root alone sets maxSchedules, a whole number from 1 to a million; the retention is kept', async () => {
  await root.post('/api/accounts', { name: 'appadmin', password: 'appadmin-password', capabilities: ['app-admin'] });
  const appAdmin = await signInAdmin(t.url('control'), 'appadmin', 'appadmin-password');
  assert.equal((await appAdmin.get('/api/settings/schedules')).json.maxSchedules, 10_000, 'the default');
  const refused = await appAdmin.put('/api/settings/schedules', { maxSchedules: 5 });
  assert.equal(refused.status, 403);
  assert.equal(refused.json.code, 'capability');

  for (const value of [0, -1, 1.5, '3', 1_000_001, null, true]) {
    const a = await root.put('/api/settings/schedules', { maxSchedules: value });
    assert.equal(a.status, 400, String(value));
    assert.equal(a.json.code, 'field.invalid');
    assert.equal(a.json.field, 'maxSchedules');
    assert.match(a.json.detail, /whole number from 1 to 1,000,000/);
  }
  const empty = await root.put('/api/settings/schedules', {});
  assert.equal(empty.status, 400);
  assert.match(empty.json.detail, /retention .* maxSchedules/);
  assert.equal((await root.get('/api/settings/schedules')).json.updatedAt, null, 'nothing was stored by a refusal');

  await root.put('/api/settings/schedules', { retention: 'P7D' });
  const set = await root.put('/api/settings/schedules', { maxSchedules: 3 });
  assert.equal(set.status, 200, set.text);
  assert.equal(set.json.maxSchedules, 3);
  assert.equal(set.json.retention, 'P7D', 'a field left out keeps its value');
  assert.equal(set.json.updatedBy, 'account:root');

  await t.gw.ctx.audit.call('audit.settle', null);
  const lines = (await root.get('/api/audit?kind=settings.update&target=schedules')).json.events as Array<{ changes: unknown }>;
  assert.ok(
    lines.some((l) => JSON.stringify(l.changes).includes('"maxSchedules"') && JSON.stringify(l.changes).includes('10000') && JSON.stringify(l.changes).includes('3')),
    `the change is in the trail with its before and after: ${JSON.stringify(lines)}`,
  );
  await root.put('/api/settings/schedules', { retention: 'P30D' });
});

test('a write past the bound answers 409 schedule.too-many and stores nothing; another token has its own room', async () => {
  await root.put('/api/settings/schedules', { maxSchedules: 3 });
  for (let i = 0; i < 3; i++) assert.equal((await asFirst('POST', '/api/schedules', every(`/billing/a${i}`))).status, 201);
  const past = await asFirst('POST', '/api/schedules', every('/billing/a3'));
  assert.equal(past.status, 409, past.text);
  assert.equal(past.json.code, 'schedule.too-many');
  assert.match(past.json.detail, /"billing-svc" holds 3 schedules .* the most one token may hold \(3\)/);
  assert.equal((await held(asFirst)).length, 3, 'the refused schedule was not stored');

  // Paused schedules still count: resuming them needs no room.
  const [one] = await held(asFirst);
  assert.equal((await asFirst('POST', `/api/schedules/${one!.id}/pause`)).status, 200);
  assert.equal((await asFirst('POST', '/api/schedules', every('/billing/a3'))).status, 409);
  assert.equal((await asFirst('POST', `/api/schedules/${one!.id}/resume`)).status, 200);

  assert.equal((await asSecond('POST', '/api/schedules', every('/billing/b0'))).status, 201, 'the bound is per token');

  // Deleting one makes room again.
  assert.equal((await asFirst('DELETE', `/api/schedules/${one!.id}`)).status, 204);
  assert.equal((await asFirst('POST', '/api/schedules', every('/billing/a3'))).status, 201);
  for (const s of await held(asFirst)) await asFirst('DELETE', `/api/schedules/${s.id}`);
  for (const s of await held(asSecond)) await asSecond('DELETE', `/api/schedules/${s.id}`);
});

test('a finished delayed action does not count, until a replace would let it fire again', async () => {
  await root.put('/api/settings/schedules', { maxSchedules: 2 });
  const at = new Date((await clockNow()) + 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
  const once = (await asFirst('POST', '/api/schedules', { routeId: 'billing', path: '/billing/once', at, roles: ['jobs'] })).json;
  assert.ok(once.id, JSON.stringify(once));
  assert.equal((await asFirst('POST', '/api/schedules', every('/billing/c0'))).status, 201);
  assert.equal((await asFirst('POST', '/api/schedules', every('/billing/c1'))).status, 409, 'two may fire: the bound is reached');

  await advanceClock(t.url('control'), 'PT2M');
  await until(async () => ((await asFirst('GET', `/api/schedules/${once.id}`)).json.finished ? true : undefined), 'the delayed action to finish');
  assert.equal((await asFirst('POST', '/api/schedules', every('/billing/c1'))).status, 201, 'the finished one left room');

  const later = new Date((await clockNow()) + 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');
  const revive = await asFirst('PUT', `/api/schedules/${once.id}`, { routeId: 'billing', path: '/billing/once', at: later, roles: ['jobs'] });
  assert.equal(revive.status, 409, revive.text);
  assert.equal(revive.json.code, 'schedule.too-many');
  const kept = (await asFirst('GET', `/api/schedules/${once.id}`)).json;
  assert.equal(kept.finished, true, 'the refused replace changed nothing');
  assert.equal(kept.at, once.at);
  for (const s of await held(asFirst)) await asFirst('DELETE', `/api/schedules/${s.id}`);
});

test('writes of one token at the same time never pass the bound together', async () => {
  await root.put('/api/settings/schedules', { maxSchedules: 4 });
  assert.equal((await asFirst('POST', '/api/schedules', every('/billing/d0'))).status, 201);
  // Twelve at once for three places: ids spread them over the schedule shards, each its own connection.
  const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => asFirst('POST', '/api/schedules', every(`/billing/e${i}`))));
  const statuses = answers.map((a) => a.status).sort();
  assert.deepEqual(statuses, [...Array(3).fill(201), ...Array(9).fill(409)], answers.map((a) => `${a.status} ${a.json?.code ?? a.text}`).join('; '));
  assert.equal((await held(asFirst)).length, 4);
  for (const s of await held(asFirst)) await asFirst('DELETE', `/api/schedules/${s.id}`);
  await root.put('/api/settings/schedules', { maxSchedules: 10_000 });
});
