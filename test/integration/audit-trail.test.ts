/**
 * The audit trail end to end (spec 1.3, 2.6, 5 rules 7 and 9, 6.1; CONTRACT.md "Audit"): a real
 * gateway on its own database, changes made through the control plane, sign-ins on both planes,
 * read back through GET /api/audit by callers of each capability.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, ROOT_PASSWORD, type TestGateway } from '../helpers/gateway.ts';
import { adminWith, signInAdmin, putOk, type Admin } from '../helpers/admin.ts';
import { call } from '../helpers/http.ts';
import { internalWith, schedulesToken } from '../helpers/scheduler.ts';

let t: TestGateway;
let root: Admin;
let control: string;

before(async () => {
  t = await startTestGateway({ GATEWAY_CLOCK: 'manual' });
  control = t.url('control');
  root = await signInAdmin(control);
});
after(() => t.close());

/** Every line told so far is written. */
const settle = () => t.gw.ctx.audit.call('audit.settle', null);

async function trail(who: Admin, query = ''): Promise<any[]> {
  await settle();
  const a = await who.get(`/api/audit${query ? `?${query}` : ''}`);
  assert.equal(a.status, 200, a.text);
  return a.json.events;
}

const ROUTE = { upstream: 'http://127.0.0.1:9', paths: ['/orders'], timeout: 'PT30S' };

async function account(name: string, body: Record<string, unknown> = {}): Promise<string> {
  const a = await root.post('/api/accounts', { name, password: `${name}-password-1`, ...body });
  assert.equal(a.status, 201, a.text);
  return a.json.id;
}

function signInAt(base: string, path: string, name: string, password: string, headers: Record<string, string> = {}) {
  return call(`${base}${path}`, { method: 'POST', body: { name, password }, headers: { origin: base, ...headers } });
}

test('changes: one line per mutation with a generic diff, an empty diff writes nothing, secrets and vault values never appear', async () => {
  await putOk(root, '/api/routes/orders', ROUTE);
  await putOk(root, '/api/routes/orders', { ...ROUTE, timeout: 'PT10S' });
  await putOk(root, '/api/routes/orders', { ...ROUTE, timeout: 'PT10S' });
  const routeLines = await trail(root, 'kind=route&target=orders');
  assert.deepEqual(routeLines.map((e) => e.action), ['route.update', 'route.create'], 'the third PUT moved nothing and wrote nothing');
  const [update, create] = routeLines;
  assert.deepEqual(update.changes, [{ field: 'timeoutMs', from: 30000, to: 10000 }]);
  assert.deepEqual(update.actor, { account: 'root' });
  assert.deepEqual(update.target, { kind: 'route', id: 'orders', name: 'orders' });
  assert.equal(update.part, 'changes');
  assert.equal(update.address, '127.0.0.1');
  assert.equal(typeof update.when, 'number');
  assert.equal(create.detail, 'created');
  assert.ok(create.changes.some((c: any) => c.field === 'paths' && c.from === null && JSON.stringify(c.to) === '["/orders"]'), 'a list compares and shows whole');

  await putOk(root, '/api/roles/ops', { implies: [] });
  const id = await account('carol', { roles: ['ops'] });
  const pw = await root.patch(`/api/accounts/${id}`, { password: 'a-new-password-2' });
  assert.ok(pw.status === 200 || pw.status === 204, pw.text);
  const accountLines = await trail(root, `targetKind=account&target=${id}`);
  assert.deepEqual(accountLines.map((e) => e.action), ['account.update', 'account.create']);
  assert.deepEqual(accountLines[0].changes, [{ field: 'passwordHash', from: '***', to: '***' }], 'a new password is a change, masked');
  assert.ok(accountLines[1].changes.every((c: any) => c.field !== 'passwordHash' || c.to === '***'));

  const secret = 'vault-value-that-never-shows-7f3a';
  assert.ok([200, 201, 204].includes((await root.put('/api/vault/db_password', { value: secret })).status));
  assert.ok([200, 201, 204].includes((await root.put('/api/vault/db_password', { value: `${secret}-2` })).status));
  assert.equal((await root.del('/api/vault/db_password')).status, 204);
  // Deleting an account revokes its tokens: the line says which.
  const doomed = await account('dora', { roles: ['ops'] });
  for (const name of ['dora-app', 'dora-ci']) assert.equal((await root.post('/api/tokens', { name, kind: 'personal', account: 'dora' })).status, 201);
  const adminToken = await root.post('/api/tokens', { name: 'dora-console', kind: 'admin', account: 'dora' });
  assert.equal(adminToken.status, 201, adminToken.text);
  assert.equal((await root.del(`/api/accounts/${doomed}`)).status, 204);
  assert.deepEqual((await trail(root, `kind=account&target=${doomed}`)).map((e) => [e.action, e.detail]), [
    ['account.delete', 'deleted, with its admin token and 2 personal tokens revoked'], ['account.create', 'created'],
  ]);
  // Each personal token revoked with it is the account's security line, as a revocation alone is (spec 6.1).
  assert.deepEqual((await trail(root, `kind=token.revoke&target=${doomed}`)).map((e) => [e.part, e.detail]).sort(), [
    ['security', 'dora-app (with its account)'], ['security', 'dora-ci (with its account)'],
  ]);
  const vaultLines = await trail(root, 'targetKind=vault');
  assert.deepEqual(vaultLines.map((e) => [e.action, e.target.name, e.detail]), [
    ['vault.delete', 'db_password', 'deleted'], ['vault.update', 'db_password', 'value replaced'], ['vault.create', 'db_password', 'created'],
  ]);
  const everything = JSON.stringify(await trail(root, 'limit=500'));
  assert.ok(!everything.includes(secret), 'no vault value in the trail');
  assert.ok(!everything.includes('a-new-password-2') && !everything.includes('carol-password-1'), 'no password in the trail');
  assert.ok(!everything.includes('$scrypt') && !everything.includes('$argon'), 'no password hash in the trail');
});

test('an agent acting with a token reads "<account>, via <token>"; the trace id and the organisation are carried', async () => {
  const minted = await root.post('/api/tokens', { name: 'ci-pipeline', kind: 'admin' });
  assert.equal(minted.status, 201);
  const bot = adminWith(control, { authorization: `Bearer ${minted.json.token}`, traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' });
  await putOk(root, '/api/organisations/acme', { name: 'Acme' });
  await putOk(bot, '/api/routes/acme-orders', { ...ROUTE, paths: ['/acme'], organisation: 'acme' });
  const [line] = await trail(root, 'target=acme-orders');
  assert.deepEqual(line.actor, { account: 'root', token: 'ci-pipeline' });
  assert.equal(line.traceId, '4bf92f3577b34da6a3ce929d0e0e4736');
  assert.equal(line.organisation, 'acme');

  const [mint] = await trail(root, 'kind=token.create&targetKind=token');
  assert.equal(mint.target.name, 'ci-pipeline');
  assert.ok(!JSON.stringify(mint).includes(minted.json.token), 'the secret is not in the line');
  assert.equal((await root.del(`/api/tokens/${minted.json.id}`)).status, 204);
  const [revoke] = await trail(root, 'kind=token.revoke');
  assert.equal(revoke.target.id, minted.json.id);
});

test('security: sign-ins, the real reason of a refusal, one signin.locked, signout; console and account target kinds', async () => {
  await account('dave', { capabilities: ['app-admin'] });
  const disabledId = await account('erin');
  assert.equal((await root.patch(`/api/accounts/${disabledId}`, { disabled: true })).status, 200);

  const ok = await signInAt(control, '/api/session', 'dave', 'dave-password-1');
  assert.equal(ok.status, 200);
  const wrong = await signInAt(control, '/api/session', 'dave', 'not-it');
  const unknown = await signInAt(control, '/api/session', `nobody-${'x'.repeat(150)}`, 'whatever');
  const disabled = await signInAt(control, '/api/session', 'erin', 'erin-password-1');
  for (const a of [wrong, unknown, disabled]) {
    assert.equal(a.status, 401);
    assert.equal(a.json.code, 'signin.refused');
    assert.equal(a.json.detail, wrong.json.detail, 'the visitor reads one sentence');
  }
  const lines = await trail(root, 'part=security&targetKind=console');
  const refused = lines.filter((e) => e.action === 'signin.refused');
  const byName = (n: string) => refused.find((e) => e.target.name === n || e.target.name?.startsWith(n));
  assert.equal(byName('dave').detail, 'bad-credentials');
  assert.deepEqual(byName('dave').actor, { account: 'dave' });
  assert.equal(byName('erin').detail, 'disabled');
  const stranger = byName('nobody-');
  assert.equal(stranger.actor, null, 'a name matching no account has no actor');
  assert.equal(stranger.detail, 'bad-credentials');
  assert.equal(Array.from(stranger.target.name).length, 64, 'the typed name is clipped');
  assert.ok(stranger.target.name.endsWith('…'));
  assert.equal(stranger.target.id, undefined);
  const signin = lines.find((e) => e.action === 'signin' && e.actor?.account === 'dave');
  assert.equal(signin.detail, 'password');
  assert.equal(signin.address, '127.0.0.1');
  assert.equal(signin.part, 'security');

  // Five failures trip the lock: the fifth writes signin.locked, the sixth nothing.
  await account('frank');
  for (let i = 0; i < 6; i++) await signInAt(control, '/api/session', 'frank', `wrong-${i}`);
  const frank = (await trail(root, 'part=security&target=frank')).map((e) => e.action);
  assert.deepEqual(frank, ['signin.locked', 'signin.refused', 'signin.refused', 'signin.refused', 'signin.refused']);

  const cookie = String(ok.headers['set-cookie']).split(';')[0]!;
  assert.equal((await call(`${control}/api/session`, { method: 'DELETE', headers: { cookie, origin: control } })).status, 204);
  const [out] = await trail(root, 'kind=signout');
  assert.deepEqual(out.actor, { account: 'dave' });
  assert.equal(out.target.kind, 'console');

  // An application sign-in: target kind account, and the organisation entered.
  await putOk(root, '/api/organisations/beta', { name: 'Beta Corp' });
  await account('gina', { organisation: 'beta' });
  const data = t.url('data');
  assert.equal((await signInAt(data, '/.meerkat/session', 'gina', 'gina-password-1')).status, 200);
  const gina = await trail(root, 'actor=gina');
  assert.deepEqual(gina.map((e) => [e.action, e.target.kind, e.organisation, e.detail]), [
    ['signin.organisation', 'account', 'beta', 'Beta Corp'], ['signin', 'account', 'beta', 'password'],
  ]);
});

test('the address is the one the gateway resolved: a caller-written X-Forwarded-For is not believed', async () => {
  await account('hana');
  await signInAt(control, '/api/session', 'hana', 'wrong', { 'x-forwarded-for': '203.0.113.9', forwarded: 'for=203.0.113.9' });
  const [line] = await trail(root, 'actor=hana');
  assert.equal(line.address, '127.0.0.1');
  assert.ok(!JSON.stringify(await trail(root, 'q=203.0.113.9')).includes('203.0.113.9'));
});

test('visibility: each capability reads its slice; console sign-ins are root\'s; no capability is refused, never an empty page', async () => {
  await putOk(root, '/api/organisations/gamma', { name: 'Gamma' });
  await account('infra', { capabilities: ['infra-admin'] });
  await account('apps', { capabilities: ['app-admin'] });
  await account('boss', { capabilities: ['org-admin'], organisation: 'gamma' });
  const memberId = await account('member', { organisation: 'gamma' });
  await account('plain');
  await putOk(root, '/api/routes/gamma-route', { ...ROUTE, paths: ['/gamma'], organisation: 'gamma' });
  await signInAt(t.url('data'), '/.meerkat/session', 'member', 'member-password-1');

  const as = async (name: string) => signInAdmin(control, name, `${name}-password-1`);
  const infra = await trail(await as('infra'), 'limit=500');
  assert.ok(infra.length > 0);
  assert.ok(infra.every((e) => e.part === 'changes' && ['route', 'identity-provider', 'certificate', 'settings', 'issue-report'].includes(e.target.kind)), JSON.stringify(infra.map((e) => e.target.kind)));
  const apps = await trail(await as('apps'), 'limit=500');
  assert.ok(apps.some((e) => e.target.kind === 'account' && e.part === 'security'), 'application accounts\' security');
  assert.ok(apps.some((e) => e.target.kind === 'account' && e.part === 'changes'));
  assert.ok(apps.every((e) => !['console', 'route', 'audit', 'token', 'vault'].includes(e.target.kind)), JSON.stringify(apps.map((e) => e.target.kind)));
  const boss = await trail(await as('boss'), 'limit=500');
  assert.ok(boss.length > 0 && boss.every((e) => e.organisation === 'gamma'));
  assert.ok(boss.some((e) => e.action === 'signin' && e.actor?.account === 'member'), 'members\' sign-ins into the organisation');
  assert.ok(boss.some((e) => e.target.id === 'gamma-route'));
  assert.ok(boss.every((e) => e.target.kind !== 'console'), 'their own console sign-in is root\'s');
  const rootSees = await trail(root, 'targetKind=console&limit=500');
  assert.ok(rootSees.some((e) => e.actor?.account === 'boss'));

  // A change that takes an object out of the organisation is the organisation's too.
  await putOk(root, '/api/organisations/delta', { name: 'Delta' });
  await putOk(root, '/api/routes/gamma-route', { ...ROUTE, paths: ['/gamma'], organisation: 'delta' });
  await putOk(root, '/api/routes/gamma-route', { ...ROUTE, paths: ['/gamma'] });
  const moved = await root.patch(`/api/accounts/${memberId}`, { organisation: 'delta' });
  assert.ok([200, 204].includes(moved.status), moved.text);
  const bossNow = await trail(await as('boss'), 'limit=500');
  const moves = bossNow.filter((e) => e.target.id === 'gamma-route' && e.action === 'route.update');
  assert.deepEqual(moves.map((e) => [e.organisation, e.organisationFrom]), [['delta', 'gamma']], 'the move out of gamma; the next one, out of delta, is not gamma\'s');
  assert.ok(bossNow.some((e) => e.target.id === memberId && e.organisationFrom === 'gamma' && e.organisation === 'delta'), 'the member who left');
  assert.deepEqual((await trail(root, 'organisation=gamma&kind=route.update')).map((e) => e.organisationFrom ?? e.organisation).slice(0, 1), ['gamma'], 'the organisation filter takes the lines it was left by');

  const plain = await as('plain');
  const refused = await plain.get('/api/audit');
  assert.equal(refused.status, 403);
  assert.equal(refused.json.code, 'capability');
  assert.equal((await call(`${control}/api/audit`)).status, 401);
});

test('filters and paging: part, a kind\'s family, notTarget, period, text; a cursor walks every line once; a bad filter is refused', async () => {
  const all = await trail(root, 'limit=500');
  const ids = all.map((e) => e.id);
  assert.deepEqual([...ids].sort().reverse(), ids, 'newest first');
  const seen: string[] = [];
  let query = 'limit=7';
  for (;;) {
    await settle();
    const page = await root.get(`/api/audit?${query}`);
    assert.equal(page.status, 200);
    seen.push(...page.json.events.map((e: any) => e.id));
    if (page.json.next === null) break;
    query = `limit=7&cursor=${encodeURIComponent(page.json.next)}`;
  }
  assert.deepEqual(seen.slice(0, ids.length).filter((id) => ids.includes(id)), ids.filter((id) => seen.includes(id)));
  assert.equal(new Set(seen).size, seen.length, 'no line twice');

  const signins = await trail(root, 'kind=signin&limit=500');
  assert.ok(signins.length > 0 && signins.every((e) => e.action === 'signin' || e.action.startsWith('signin.')));
  const noConsole = await trail(root, 'notTarget=console&part=security&limit=500');
  assert.ok(noConsole.every((e) => e.target.kind !== 'console' && e.part === 'security'));
  assert.ok((await trail(root, 'q=DISABLED')).every((e) => e.detail === 'disabled'));
  const now = Math.floor((await call(`${control}/__clock`)).json.now / 1000);
  assert.equal((await trail(root, `from=${now + 1}`)).length, 0);
  assert.equal((await trail(root, `to=${now + 1}&limit=500`)).length, all.length);

  for (const bad of ['part=nope', 'kind=Sign%20in', 'targetKind=planet', 'from=yesterday', 'sort=id', 'cursor=abc']) {
    const a = await root.get(`/api/audit?${bad}`);
    assert.equal(a.status, 400, bad);
    assert.ok(['filter.invalid', 'cursor.invalid'].includes(a.json.code), `${bad}: ${a.json.code}`);
    assert.ok(a.json.detail.length > 10);
  }
});

test('retention: root alone sets it, the change is audited, the hourly sweep removes what is older on the test clock', async () => {
  const apps = await signInAdmin(control, 'apps', 'apps-password-1');
  assert.equal((await apps.put('/api/settings/audit', { retention: 'P3M' })).json.code, 'capability');
  assert.equal((await apps.get('/api/settings/audit')).status, 403);
  const initial = (await root.get('/api/settings/audit')).json;
  assert.equal(initial.retention, 'P1Y');
  assert.equal(initial.operationRetention, 'P1M');
  assert.deepEqual(initial.push, { audit: false, console: false });
  assert.deepEqual(initial.dropped, { audit: 0, console: 0 });
  for (const [body, field] of [[{ retention: 'P4M' }, 'retention'], [{ operationRetention: 'P6D' }, 'operationRetention'], [{ operationRetention: 'P2Y' }, 'operationRetention'], [{ nope: 1 }, 'nope'], [{}, 'retention']] as const) {
    const a = await root.put('/api/settings/audit', body);
    assert.equal(a.status, 400, JSON.stringify(body));
    assert.equal(a.json.field, field);
  }
  const pushed = await root.put('/api/settings/audit', { push: { audit: true } });
  assert.equal(pushed.status, 403);
  assert.equal(pushed.json.code, 'licensed-edition');

  // Sessions last 12 hours: after the clock's jump the test reads with a token.
  const minted = await root.post('/api/tokens', { name: 'auditor', kind: 'admin' });
  const auditor = adminWith(control, { authorization: `Bearer ${minted.json.token}` });
  const before = (await trail(root, 'limit=500')).length;
  const set = await root.put('/api/settings/audit', { retention: 'P3M' });
  assert.equal(set.status, 200, set.text);
  assert.equal(set.json.retention, 'P3M');
  assert.equal(set.json.updatedBy, 'account:root');
  const [line] = await trail(root, 'kind=settings.update&target=audit');
  assert.deepEqual(line.changes, [{ field: 'retention', from: 'P1Y', to: 'P3M' }]);

  // Four months on: the next hourly sweep removes every line older than three months.
  const advanced = await call(`${control}/__clock/advance`, { method: 'POST', body: { by: 'P120D' }, headers: { ...root.headers } });
  assert.equal(advanced.status, 200, advanced.text);
  // The sweep the move set off ends before the next move: it books the next one an hour after its
  // end, and an hour moved while it still ran would set off nothing.
  await settle();
  await call(`${control}/__clock/advance`, { method: 'POST', body: { by: 'PT1H' }, headers: { ...root.headers } });
  await settle();
  root = auditor;
  const after = await trail(root, 'limit=500');
  assert.ok(before > 5);
  assert.equal(after.length, 0, `left: ${JSON.stringify(after.map((e) => e.action))}`);
  const settings = (await root.get('/api/settings/audit')).json;
  assert.ok(settings.lastSweep && settings.lastSweep.removed.changes + settings.lastSweep.removed.security >= before);
});

test('the export is the licensed edition\'s: the community edition refuses it naming the feature', async () => {
  const a = await root.get('/api/audit/export');
  assert.equal(a.status, 403);
  assert.equal(a.json.code, 'licensed-edition');
  assert.match(a.json.detail, /audit export/);
});

test('the root password used by the tests never reaches the trail', async () => {
  assert.ok(!JSON.stringify(await trail(root, 'limit=500')).includes(ROOT_PASSWORD));
});

test('password.change by its owner: the account\'s security, never a change of the control plane; other sessions end', async () => {
  await account('ivan', { organisation: 'acme' });
  const data = t.url('data');
  const first = await signInAt(data, '/.meerkat/session', 'ivan', 'ivan-password-1');
  const second = await signInAt(data, '/.meerkat/session', 'ivan', 'ivan-password-1');
  const cookie = (a: { headers: Record<string, unknown> }) => String(a.headers['set-cookie']).split(';')[0]!;
  const change = (body: unknown) => call(`${data}/.meerkat/session/password`, { method: 'PUT', body, headers: { cookie: cookie(first), origin: data } });
  const wrong = await change({ current: 'not-the-password', password: 'ivan-password-2' });
  assert.equal(wrong.status, 401);
  assert.equal((await change({ current: 'ivan-password-1', password: 'short' })).json.field, 'password');
  assert.equal((await change({ current: 'ivan-password-1', password: 'ivan-password-2' })).status, 204);
  assert.equal((await call(`${data}/.meerkat/session`, { headers: { cookie: cookie(first) } })).status, 200, 'this session stays');
  assert.equal((await call(`${data}/.meerkat/session`, { headers: { cookie: cookie(second) } })).status, 401, 'the other one ended');
  assert.equal((await signInAt(data, '/.meerkat/session', 'ivan', 'ivan-password-2')).status, 200);

  const lines = await trail(root, 'actor=ivan&kind=password');
  assert.deepEqual(lines.map((e) => [e.part, e.action, e.target.kind, e.organisation, e.detail]), [['security', 'password.change', 'account', 'acme', 'by its owner']]);
  assert.equal(lines[0].changes, undefined, 'no hash, not even masked');
  assert.equal((await trail(root, 'part=changes&actor=ivan')).length, 0, 'not a change of the control plane');
  assert.ok(!JSON.stringify(await trail(root, 'limit=500')).includes('ivan-password-2'));
});

test('a wrong current password at a password change is a refused sign-in: in the trail, and counted toward the lock', async () => {
  await account('judy');
  const first = await signInAt(control, '/api/session', 'judy', 'judy-password-1');
  assert.equal(first.status, 200);
  const cookie = String(first.headers['set-cookie']).split(';')[0]!;
  const change = (current: string) => call(`${control}/api/session/password`, { method: 'PUT', body: { current, password: 'judy-password-2' }, headers: { cookie, origin: control } });
  const wrong = await change('not-the-password');
  assert.equal(wrong.status, 401);
  assert.equal(wrong.json.code, 'signin.refused');
  // Three failed sign-ins and a fifth wrong current password: the name is locked, for both doors.
  for (let i = 0; i < 3; i++) assert.equal((await signInAt(control, '/api/session', 'judy', `wrong-${i}`)).status, 401);
  const tripping = await change('still-not-it');
  assert.equal(tripping.status, 429);
  assert.equal(tripping.json.code, 'signin.locked');
  assert.equal((await change('judy-password-1')).status, 429, 'locked: even the right current password waits');
  assert.equal((await signInAt(control, '/api/session', 'judy', 'judy-password-1')).status, 429);
  assert.equal((await call(`${control}/api/session`, { headers: { cookie } })).status, 200, 'the session itself goes on');

  const lines = await trail(root, 'part=security&target=judy');
  assert.deepEqual(lines.map((e) => [e.action, e.detail]), [
    ['signin.locked', 'throttled'],
    ['signin.refused', 'bad-credentials'], ['signin.refused', 'bad-credentials'], ['signin.refused', 'bad-credentials'],
    ['signin.refused', 'bad-credentials (password change)'],
    ['signin', 'password'],
  ]);
  assert.equal(lines[4].actor?.account, 'judy');
  assert.equal(lines[4].target.kind, 'console');
});

test('the console\'s actions on a schedule are changes of the control plane; pausing what is paused writes nothing', async () => {
  await putOk(root, '/api/roles/nightly', { implies: [] });
  await putOk(root, '/api/routes/jobs', { ...ROUTE, paths: ['/jobs'] });
  const token = await schedulesToken(root, 'ops-jobs', ['jobs'], ['nightly']);
  const internal = internalWith(() => t.url('internal'), () => token);
  const created = await internal('POST', '/api/schedules', { routeId: 'jobs', path: '/jobs/rebuild', every: 'PT1H', roles: ['nightly'] });
  assert.equal(created.status, 201, created.text);
  const sid = created.json.id as string;
  for (const action of ['pause', 'pause', 'resume', 'resume']) {
    const a = await root.post(`/api/schedules/${sid}/${action}`, {});
    assert.equal(a.status, 200, a.text);
  }
  assert.equal((await root.del(`/api/schedules/${sid}`)).status, 204);
  const lines = await trail(root, `target=${sid}`);
  assert.deepEqual(lines.map((e) => [e.action, e.detail, e.target.kind, e.actor?.account]), [
    ['schedule.delete', 'deleted, with its history', 'schedule', 'root'],
    ['schedule.resume', 'resumed', 'schedule', 'root'],
    ['schedule.pause', 'paused', 'schedule', 'root'],
  ], 'the backend\'s own creation is its history, not the trail\'s; each console action once');
});

test('an application sign-in outside the organisation\'s hours is refused with the one sentence; the trail says outside-hours', async () => {
  const now = (await call(`${control}/__clock`)).json.now as number;
  const days = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];
  const today = days[new Date(now).getUTCDay()];
  // Open every day but today, in UTC: now is outside.
  await putOk(root, '/api/organisations/nightshift', { name: 'Night shift', hours: { timezone: 'UTC', windows: [{ days: days.filter((d) => d !== today), from: '00:00', to: '24:00' }] } });
  await account('jules', { organisation: 'nightshift' });
  const data = t.url('data');
  const refused = await signInAt(data, '/.meerkat/session', 'jules', 'jules-password-1');
  const wrong = await signInAt(data, '/.meerkat/session', 'jules', 'not-it');
  assert.equal(refused.status, 401);
  assert.equal(refused.json.detail, wrong.json.detail, 'the visitor reads one sentence');
  const lines = await trail(root, 'actor=jules&kind=signin.refused');
  assert.deepEqual(lines.map((e) => e.detail), ['bad-credentials', 'outside-hours']);
  assert.ok(lines.every((e) => e.organisation === 'nightshift' && e.target.kind === 'account'));
  // The console's door is not an application's: hours do not shut it.
  assert.equal((await signInAt(control, '/api/session', 'jules', 'jules-password-1')).status, 200);
});
