import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startTestGateway, ROOT_PASSWORD, type TestGateway } from '../helpers/gateway.ts';
import { adminWith, signInAdmin, type Admin } from '../helpers/admin.ts';
import { call, signIn, type Answer } from '../helpers/http.ts';
import { openStore } from '../../src/store/orm.ts';
import { Token } from '../../src/store/entities.ts';

let t: TestGateway;
let root: Admin;
before(async () => {
  t = await startTestGateway();
  root = await signInAdmin(t.url('control'));
  await root.put('/api/roles/staff', {});
  await root.put('/api/organisations/acme', { name: 'Acme' });
});
after(async () => { await t?.close(); });

function refused(a: Answer, status: number, code: string, field?: string): void {
  assert.equal(a.status, status, a.text);
  assert.equal(a.json.code, code, a.text);
  if (field !== undefined) assert.equal(a.json.field, field, a.text);
}

test('accounts: created without echoing the password, signed in with, changed, refused when wrong', async () => {
  const made = await root.post('/api/accounts', { name: 'bob', password: 'bob-password-12', roles: ['staff'], organisation: 'acme' });
  assert.equal(made.status, 201, made.text);
  assert.equal(made.headers.location, `/api/accounts/${made.json.id}`);
  assert.deepEqual(Object.keys(made.json).sort(), ['capabilities', 'disabled', 'id', 'name', 'organisation', 'roles']);
  assert.doesNotMatch(made.text, /bob-password-12|scrypt/);
  const session = await signIn(root.control, 'bob', 'bob-password-12');

  refused(await root.post('/api/accounts', { name: 'bob', password: 'another-password' }), 409, 'account.name-taken', 'name');
  refused(await root.post('/api/accounts', { name: 'carol', password: 'short' }), 400, 'field.invalid', 'password');
  refused(await root.post('/api/accounts', { name: 'carol', password: 'carol-password-1', roles: ['ghost'] }), 400, 'role.unknown', 'roles');
  refused(await root.post('/api/accounts', { name: 'carol', password: 'carol-password-1', organisation: 'nowhere' }), 400, 'organisation.unknown', 'organisation');
  refused(await root.post('/api/accounts', { name: 'carol', password: 'carol-password-1', capabilities: ['god'] }), 400, 'field.invalid', 'capabilities[0]');
  refused(await root.post('/api/accounts', { name: 'has space', password: 'carol-password-1' }), 400, 'field.invalid', 'name');
  // The identity of scheduled calls is no account's: a service could not tell the two apart.
  for (const name of ['scheduler', 'Scheduler', 'SCHEDULER']) {
    refused(await root.post('/api/accounts', { name, password: 'carol-password-1' }), 400, 'field.invalid', 'name');
  }
  assert.equal((await root.get('/api/accounts')).json.accounts.some((a: { name: string }) => a.name === 'carol'), false, 'nothing half-written');

  // A new password ends the sessions opened with the old one.
  const changed = await root.patch(`/api/accounts/${made.json.id}`, { password: 'bob-password-new' });
  assert.equal(changed.status, 200);
  assert.equal((await call(`${root.control}/api/session`, { headers: { cookie: session } })).status, 401);
  await signIn(root.control, 'bob', 'bob-password-new');
  refused(await root.patch('/api/accounts/nobody', { disabled: true }), 404, 'not-found');

  const rootId = (await root.get('/api/accounts')).json.accounts.find((a: { name: string }) => a.name === 'root').id;
  refused(await root.patch(`/api/accounts/${rootId}`, { disabled: true }), 409, 'account.protected');
  refused(await root.del(`/api/accounts/${rootId}`), 409, 'account.protected');
});

test('capabilities: only root hands them out; an account without one is refused, not served empty', async () => {
  const admin = await root.post('/api/accounts', { name: 'appadmin', password: 'appadmin-password', capabilities: ['app-admin'] });
  assert.equal(admin.status, 201, admin.text);
  await root.post('/api/accounts', { name: 'plain', password: 'plain-password-1' });
  const appAdmin = await signInAdmin(root.control, 'appadmin', 'appadmin-password');
  const plain = await signInAdmin(root.control, 'plain', 'plain-password-1');

  assert.equal((await appAdmin.post('/api/accounts', { name: 'dave', password: 'dave-password-1', roles: ['staff'] })).status, 201);
  refused(await appAdmin.post('/api/accounts', { name: 'eve', password: 'eve-password-12', capabilities: ['root'] }), 403, 'capability');
  refused(await appAdmin.get('/api/routes'), 403, 'capability');
  refused(await appAdmin.get('/api/tokens'), 403, 'capability');
  refused(await plain.get('/api/accounts'), 403, 'capability');
  refused(await plain.put('/api/roles/x', {}), 403, 'capability');
  refused(await call(`${root.control}/api/routes`), 401, 'unauthenticated');
});

test('an account that holds capabilities is changed or deleted by root alone: an app-admin cannot take root\'s account or a peer\'s', async () => {
  const infra = await root.post('/api/accounts', { name: 'infra', password: 'infra-password-1', capabilities: ['infra-admin'] });
  assert.equal(infra.status, 201, infra.text);
  assert.equal((await root.post('/api/accounts', { name: 'peer', password: 'peer-password-12', capabilities: ['app-admin'] })).status, 201);
  const member = await root.post('/api/accounts', { name: 'member', password: 'member-password-1', roles: ['staff'] });
  assert.equal(member.status, 201, member.text);
  const appAdmin = await signInAdmin(root.control, 'peer', 'peer-password-12');
  const ids = new Map<string, string>((await root.get('/api/accounts')).json.accounts.map((a: { name: string; id: string }) => [a.name, a.id]));
  const rootSession = await signIn(root.control, 'root', ROOT_PASSWORD);

  for (const name of ['root', 'infra', 'appadmin']) {
    const id = ids.get(name)!;
    refused(await appAdmin.patch(`/api/accounts/${id}`, { password: 'taken-over-password' }), 403, 'capability');
    refused(await appAdmin.patch(`/api/accounts/${id}`, { disabled: true }), 403, 'capability');
    refused(await appAdmin.patch(`/api/accounts/${id}`, { roles: ['staff'] }), 403, 'capability');
    refused(await appAdmin.del(`/api/accounts/${id}`), 403, 'capability');
  }
  assert.equal((await call(`${root.control}/api/session`, { headers: { cookie: rootSession } })).status, 200, 'root\'s session is untouched');
  await signIn(root.control, 'root', ROOT_PASSWORD);
  await signIn(root.control, 'infra', 'infra-password-1');
  assert.equal((await root.get(`/api/accounts/${ids.get('infra')}`)).json.disabled, false);

  // An account without capabilities stays the app-admin's to manage; root manages every account.
  assert.equal((await appAdmin.patch(`/api/accounts/${member.json.id}`, { password: 'member-password-2' })).status, 200);
  assert.equal((await root.patch(`/api/accounts/${ids.get('infra')}`, { password: 'infra-password-2' })).status, 200);
  await signIn(root.control, 'infra', 'infra-password-2');
  refused(await appAdmin.patch('/api/accounts/nobody', { disabled: true }), 404, 'not-found');

  // The write judges the row itself: a node whose view has not yet seen a grant made on another
  // node still cannot change the account it was granted to.
  await assert.rejects(t.gw.config.call('account.update', { id: ids.get('infra')!, change: { disabled: true }, byRoot: false }), (err: { code?: string }) => err.code === 'capability');
  await assert.rejects(t.gw.config.call('account.delete', { id: ids.get('infra')!, byRoot: false }), (err: { code?: string }) => err.code === 'capability');
  assert.equal((await root.get(`/api/accounts/${ids.get('infra')}`)).json.disabled, false);
});

test('tokens: the secret is shown once and stored as its SHA-256; revocation is immediate', async () => {
  const minted = await root.post('/api/tokens', { name: 'deploy', kind: 'admin' });
  assert.equal(minted.status, 201, minted.text);
  assert.match(minted.json.token, /^mk_[\w-]{43}$/);
  const bearer = adminWith(root.control, { authorization: `Bearer ${minted.json.token}` });
  assert.equal((await bearer.get('/api/routes')).status, 200, 'an admin token acts with root\'s rights');

  const listed = await root.get('/api/tokens');
  assert.doesNotMatch(listed.text, new RegExp(minted.json.token));
  const row = listed.json.tokens.find((x: { id: string }) => x.id === minted.json.id);
  assert.equal(row.kind, 'admin');
  assert.equal(row.revokedAt, null);
  const store = await openStore({ dataDir: t.db.dataDir, databaseUrl: t.db.databaseUrl });
  try {
    const stored = await store.em().findOneOrFail(Token, { id: minted.json.id });
    assert.equal(stored.hash, createHash('sha256').update(minted.json.token).digest('hex'));
  } finally {
    await store.close();
  }

  assert.equal((await root.del(`/api/tokens/${minted.json.id}`)).status, 204);
  refused(await bearer.get('/api/routes'), 401, 'unauthenticated');
  refused(await root.del(`/api/tokens/${minted.json.id}`), 404, 'not-found');
  assert.notEqual((await root.get('/api/tokens')).json.tokens.find((x: { id: string }) => x.id === minted.json.id).revokedAt, null);
});

test('tokens: kinds and perimeters are checked', async () => {
  await root.put('/api/routes/billing', { upstream: 'http://billing.internal', paths: ['/billing'] });
  const sched = await root.post('/api/tokens', { name: 'billing-jobs', kind: 'schedules', routes: ['billing'], roles: ['staff'] });
  assert.equal(sched.status, 201, sched.text);
  const personal = await root.post('/api/tokens', { name: 'bob-phone', kind: 'personal', account: 'bob' });
  assert.equal(personal.status, 201, personal.text);
  refused(await root.post('/api/tokens', { name: 'x', kind: 'root' }), 400, 'field.invalid', 'kind');
  refused(await root.post('/api/tokens', { name: 'x', kind: 'personal' }), 400, 'account.unknown', 'account');
  refused(await root.post('/api/tokens', { name: 'x', kind: 'personal', account: 'ghost' }), 400, 'account.unknown', 'account');
  refused(await root.post('/api/tokens', { name: 'x', kind: 'schedules', routes: ['nowhere'] }), 400, 'field.invalid', 'routes');
  refused(await root.post('/api/tokens', { name: 'x', kind: 'schedules', roles: ['ghost'] }), 400, 'role.unknown', 'roles');
  refused(await root.post('/api/tokens', { name: 'x', kind: 'admin', routes: ['*'] }), 400, 'field.invalid', 'routes');
  refused(await root.post('/api/tokens', { name: 'x', kind: 'schedules', organisations: ['nowhere'] }), 400, 'organisation.unknown', 'organisations');
  refused(await root.post('/api/tokens', { name: 'x', kind: 'personal', account: 'bob', organisations: ['acme'] }), 400, 'field.invalid', 'organisations');
  const tenant = await root.post('/api/tokens', { name: 'acme-jobs', kind: 'schedules', routes: ['billing'], organisations: ['acme'] });
  assert.equal(tenant.status, 201, tenant.text);
  const listed = (await root.get('/api/tokens')).json.tokens as Array<{ name: string; organisations: string[] | null }>;
  assert.deepEqual(listed.find((x) => x.name === 'acme-jobs')?.organisations, ['acme']);
  assert.deepEqual(listed.find((x) => x.name === 'billing-jobs')?.organisations, [], 'none unless given');
  // A personal token does not open the control plane; a schedules token opens only the internal plane's API.
  refused(await call(`${root.control}/api/routes`, { headers: { authorization: `Bearer ${personal.json.token}` } }), 403, 'token-kind');
  const names = (await root.get('/api/tokens')).json.tokens.map((x: { name: string }) => x.name);
  assert.equal(names.includes('x'), false, 'nothing half-written');
});

test('organisations: hours checked field by field; in use kept', async () => {
  const hours = { timezone: 'Europe/Paris', windows: [{ days: ['mon', 'TUE'], from: '08:00', to: '18:30' }] };
  const put = await root.put('/api/organisations/globex', { name: 'Globex', hours });
  assert.equal(put.status, 201, put.text);
  assert.deepEqual(put.json.hours.windows[0].days, ['MON', 'TUE']);
  refused(await root.put('/api/organisations/bad', { name: 'Bad', hours: { timezone: 'Mars/Olympus', windows: hours.windows } }), 400, 'field.invalid', 'hours.timezone');
  refused(await root.put('/api/organisations/bad', { name: 'Bad', hours: { ...hours, windows: [{ days: ['MON'], from: '25:00', to: '18:00' }] } }), 400, 'field.invalid', 'hours.windows[0].from');
  refused(await root.put('/api/organisations/bad', { hours }), 400, 'field.invalid', 'name');
  refused(await root.get('/api/organisations/bad'), 404, 'not-found');
  refused(await root.del('/api/organisations/acme'), 409, 'organisation.in-use');
  assert.equal((await root.del('/api/organisations/globex')).status, 204);
});
