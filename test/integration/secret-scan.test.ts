/**
 * No secret gets out (spec 1.3 rules 6 and 12, 2.6; CONTRACT.md "Requests and answers", "Audit").
 * One licensed gateway, with the audit push of both streams on to a real OTLP receiver, goes
 * through a broad session that handles every kind of secret: passwords (sign-ins right and wrong
 * on both planes, an unknown name, a locked name, accounts created and changed by an admin and
 * by their owner), tokens of each kind minted, used and revoked, session cookies, vault values put,
 * replaced, resolved by scheduled calls and deleted, bodies and headers of audited operations,
 * refusals of bad input. Then every answer the test received, every operational log line, every
 * audit event, the CSV export and every record the collector got are searched for each secret,
 * whole or in part.
 *
 * The one place a secret must appear is its issuing answer: the token in the body of the mint
 * answer, the session cookie in the Set-Cookie header of the sign-in that opens it. That one
 * carrier is cut out of that one answer for that one secret; everything else is searched. What the
 * upstream service receives is not searched: bodies and identity are its to get.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createPrivateKey, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { adminWith, putOk, type Admin } from '../helpers/admin.ts';
import { call, type Answer } from '../helpers/http.ts';
import { internalWith } from '../helpers/scheduler.ts';
import { startUpstream, type Upstream } from '../helpers/upstream.ts';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.ts';
import { answerText, recordAnswers, type AnswerRecorder, type RecordedAnswer } from '../helpers/answer-recorder.ts';
import { HEX_WINDOW, SecretBook, describeFindings, scanForSecrets, type Source } from '../helpers/secret-scan.ts';
import { openStore } from '../../src/store/orm.ts';
import { Account, SigningKeyRow } from '../../src/store/entities.ts';
import { unseal } from '../../src/core/vault/seal.ts';

const CONTRACT = {
  openapi: '3.1.0',
  info: { title: 'shop', version: '1' },
  paths: {
    '/orders': { post: { summary: 'Place an order' } },
    '/orders/{id}': { put: { summary: 'Replace an order' } },
    '/reports': { post: { summary: 'File a report' } },
  },
};
/** Fields read from every place a secret may travel in: each reads `***` or a masked object. */
const SHOP_AUDIT = {
  operations: {
    'POST /orders': {
      on: true, body: true, secretFields: ['iban'],
      fields: {
        customer: 'body:/customer/id', key: 'header:x-api-key', auth: 'header:authorization', cookies: 'header:cookie',
        card: 'body:/card', pw: 'body:/password', access: 'query:access_token', iban: 'body:/iban',
      },
    },
    'PUT /orders/{id}': { on: true, body: true, secretFields: ['pinCode'], fields: { order: 'path:id' } },
    'POST /reports': { on: true, body: true },
  },
};
const BILLING_CONTRACT = { openapi: '3.1.0', info: { title: 'billing', version: '1' }, paths: { '/pay': { post: { summary: 'Pay' } } } };

let db: TestDatabase;
let t: TestGateway;
let up: Upstream;
let otlp: OtlpReceiver;
let recorder: AnswerRecorder;
let root: Admin;
let control: string;
let data: string;
let internalUrl: string;
let stopped = false;
let databaseUrlUsed: string | undefined;
/** Cookies later steps present. */
let rootConsoleCookie = '';
let appCookie = '';
const book = new SecretBook();
/** The answer that issues each token or cookie, and what carries it there. */
const issued = new Map<string, { seq: number; carrier: 'token' | 'set-cookie' }>();
/** Accounts whose stored hash is looked for at the end. */
const accounts = ['root'];

before(async () => {
  up = await startUpstream((req, res) => {
    // Never an echo: what the service sends back is its own, and it sends no secret.
    const status = req.url?.startsWith('/reports') ? 202 : 200;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end('{"ok":true}');
  });
  otlp = await startOtlpReceiver();
  db = await createTestDatabase();
  const vaultKey = randomBytes(32).toString('base64');
  book.add('vault master key', vaultKey, { core: vaultKey.replace(/=+$/, '') });
  const rootPassword = book.fresh('root password');
  let databaseUrl = db.databaseUrl;
  if (databaseUrl) {
    // Trust authentication ignores it: the password in the URL is there to be looked for.
    const url = new URL(databaseUrl);
    url.password = book.fresh('database password');
    databaseUrl = url.toString();
  }
  databaseUrlUsed = databaseUrl;
  const file = join(db.dataDir, 'gateway.json');
  writeFileSync(file, JSON.stringify({
    roles: { buyer: {} },
    organisations: { acme: { name: 'Acme' } },
    routes: {
      shop: {
        upstream: up.origin, paths: ['/shop'], stripPrefix: true, rule: { roles: ['buyer'] }, identity: 'jwt',
        organisation: 'acme', openapi: CONTRACT, audit: SHOP_AUDIT,
      },
    },
  }));
  recorder = recordAnswers();
  t = await startTestGateway({
    GATEWAY_EDITION: 'licensed', GATEWAY_CLOCK: 'manual', GATEWAY_OTLP_ENDPOINT: otlp.url, GATEWAY_CONFIG: file,
    GATEWAY_VAULT_KEY: vaultKey, GATEWAY_ROOT_PASSWORD: rootPassword,
  }, { ...db, databaseUrl });
  control = t.url('control');
  data = t.url('data');
  internalUrl = t.url('internal');
});

after(async () => {
  if (!stopped) await t?.gw.stop();
  await recorder?.stop();
  await db?.drop();
  await up?.close();
  await otlp?.close();
});

const settle = () => t.gw.ctx.audit.call('audit.settle', null);

function signInAt(base: string, path: string, name: string, password: string): Promise<Answer> {
  return call(`${base}${path}`, { method: 'POST', body: { name, password }, headers: { origin: base } });
}

/** The answer just received, checked to be the one meant. */
function lastAnswer(method: string, path: string, status: number): RecordedAnswer {
  const a = recorder.last();
  assert.equal(`${a.method} ${new URL(a.url).pathname} ${a.status}`, `${method} ${path} ${status}`, 'the recorder holds the last answer');
  return a;
}

/** A sign-in that opens a session: its cookie becomes a secret, issued by that answer. */
async function session(label: string, plane: 'control' | 'data', name: string, password: string): Promise<string> {
  const base = plane === 'control' ? control : data;
  const path = plane === 'control' ? '/api/session' : '/.meerkat/session';
  const a = await signInAt(base, path, name, password);
  assert.equal(a.status, 200, a.text);
  const pair = String(a.headers['set-cookie']).split(';')[0]!;
  const value = pair.slice(pair.indexOf('=') + 1);
  book.add(label, value, { core: value.replace(/^mks_/, '') });
  issued.set(label, { seq: lastAnswer('POST', path, 200).seq, carrier: 'set-cookie' });
  return pair;
}

/** A token minted by root (`by` holds root's credential): the secret, issued by the mint answer. */
async function mint(by: Admin, label: string, body: Record<string, unknown>): Promise<{ id: string; token: string }> {
  const a = await by.post('/api/tokens', body);
  assert.equal(a.status, 201, a.text);
  book.add(label, a.json.token, { core: a.json.token.replace(/^mk_/, '') });
  issued.set(label, { seq: lastAnswer('POST', '/api/tokens', 201).seq, carrier: 'token' });
  return { id: a.json.id, token: a.json.token };
}

function refused(a: Answer, status: number, what: string): void {
  assert.equal(a.status, status, `${what}: ${a.text}`);
  assert.match(String(a.headers['content-type']), /^application\/problem\+json/, what);
}

const json = { 'content-type': 'application/json' };

test('the scanner finds a secret, whole or in part, and only outside the place that must carry it', () => {
  const probe = new SecretBook();
  const secret = probe.fresh('planted');
  const minted = `mk_${randomBytes(32).toString('base64url')}`;
  const token = probe.add('planted token', minted, { core: minted.slice(3) });
  assert.throws(() => probe.add('too short', 'abc'), /shorter than a fragment/);
  const hex = createHash('sha256').update(secret).digest('hex');
  probe.add('planted hash', hex, { window: HEX_WINDOW });
  const found = scanForSecrets(probe, [
    { where: 'clean', text: `nothing here but ${secret.slice(0, 7)} and ${hex.slice(0, 15)}` },
    { where: 'whole', text: `{"detail":"${secret}"}` },
    { where: 'echoed by a parser', text: `Unexpected token, ..."password":${secret.slice(0, 10)}"... is not valid JSON` },
    { where: 'hash', text: `session ${hex.slice(20, 40)}` },
    { where: 'issuing answer', text: `{"token":"${token}"}`, carrier: new Map([['planted token', '{"token":"<issued>"}']]) },
    { where: 'issuing answer twice', text: `{"token":"${token}","copy":"${token}"}`, carrier: new Map([['planted token', `{"token":"<issued>","copy":"${token}"}`]]) },
  ]);
  assert.deepEqual(found.map((f) => [f.where, f.label, f.whole]), [
    ['whole', 'planted', true],
    ['echoed by a parser', 'planted', false],
    ['hash', 'planted hash', false],
    ['issuing answer twice (outside the place that carries it)', 'planted token', true],
  ]);
  assert.ok(found.every((f) => !f.context.includes(secret.slice(0, 8))), 'a finding names the secret by its label, not its value');
  assert.match(describeFindings(found), /- planted in whole: the whole value/);
});

test('root signs in on the console, switches the push of both streams on and mints an admin token', async () => {
  refused(await signInAt(control, '/api/session', 'root', book.fresh('wrong password typed for root')), 401, 'a wrong root password');
  rootConsoleCookie = await session('root console session', 'control', 'root', book.get('root password').value);
  const consoleRoot = adminWith(control, { cookie: rootConsoleCookie, origin: control });
  const minted = await mint(consoleRoot, 'root admin token', { name: 'root-script', kind: 'admin' });
  // The test clock moves later: a token does not expire, a session would.
  root = adminWith(control, { authorization: `Bearer ${minted.token}` });
  const push = await root.put('/api/settings/audit', { push: { audit: true, console: true } });
  assert.equal(push.status, 200, push.text);
  assert.deepEqual(push.json.push, { audit: true, console: true });
});

test('accounts created and given new passwords by admins; refusals of bad passwords and bodies', async () => {
  const create = async (name: string, body: Record<string, unknown>) => {
    const a = await root.post('/api/accounts', { name, password: book.fresh(`${name} password 1`), ...body });
    assert.equal(a.status, 201, a.text);
    accounts.push(name);
    return a.json.id as string;
  };
  const alice = await create('alice', { roles: ['buyer'], organisation: 'acme' });
  await create('bob', { capabilities: ['app-admin'] });
  await create('locky', { roles: ['buyer'] });
  assert.equal((await root.patch(`/api/accounts/${alice}`, { password: book.fresh('alice password 2') })).status, 200);

  refused(await root.post('/api/accounts', { name: 'mallory', password: book.fresh('a password too short', 7) }), 400, 'a short password');
  refused(await root.post('/api/accounts', { name: 'mallory', password: book.fresh('a password too long', 800) }), 400, 'a long password');
  refused(await root.post('/api/accounts', { name: 'mallory', password: book.fresh('a password beside an unknown field'), colour: 'red' }), 400, 'an unknown field');
  refused(await root.post('/api/accounts', { name: 'bad name!', password: book.fresh('a password beside a bad name') }), 400, 'a bad name');
  const raw = (method: string, path: string, text: string) => call(`${control}${path}`, { method, headers: { ...root.headers, ...json }, raw: text });
  refused(await raw('POST', '/api/accounts', `{"name":"mallory","password":${book.fresh('a password not quoted')}}`), 400, 'malformed JSON');
  refused(await raw('POST', '/api/accounts', `{"name":"mallory","password":"${book.fresh('a password not closed')}}`), 400, 'malformed JSON');
  refused(await root.patch(`/api/accounts/${alice}`, { password: book.fresh('a new password too short', 7) }), 400, 'a short new password');
  refused(await raw('PATCH', `/api/accounts/${alice}`, `{"password":${book.fresh('a new password not quoted')}}`), 400, 'malformed JSON');

  // An app-admin who is not root: signs in, creates an account, replaces its password, changes its own.
  const bobCookie = await session('bob console session', 'control', 'bob', book.get('bob password 1').value);
  const bob = adminWith(control, { cookie: bobCookie, origin: control });
  const carol = await bob.post('/api/accounts', { name: 'carol', password: book.fresh('carol password 1') });
  assert.equal(carol.status, 201, carol.text);
  accounts.push('carol');
  assert.equal((await bob.patch(`/api/accounts/${carol.json.id}`, { password: book.fresh('carol password 2') })).status, 200);
  const change = (body: unknown) => call(`${control}/api/session/password`, { method: 'PUT', body, headers: { cookie: bobCookie, origin: control } });
  refused(await change({ current: book.fresh('bob wrong current password'), password: book.fresh('bob password refused for a wrong current') }), 401, 'a wrong current password');
  refused(await change({ current: book.get('bob password 1').value, password: book.fresh('bob new password too short', 7) }), 400, 'a short new password');
  assert.equal((await change({ current: book.get('bob password 1').value, password: book.fresh('bob password 2') })).status, 204);
  assert.equal((await call(`${control}/api/session`, { method: 'DELETE', headers: { cookie: bobCookie, origin: control } })).status, 204);

  refused(await signInAt(control, '/api/session', 'nobody', book.fresh('password typed for an unknown console name')), 401, 'an unknown name');
  const statuses: number[] = [];
  for (let i = 1; i <= 5; i++) statuses.push((await signInAt(control, '/api/session', 'carol', book.fresh(`carol wrong console password ${i}`))).status);
  assert.deepEqual(statuses, [401, 401, 401, 401, 429]);
  refused(await signInAt(control, '/api/session', 'carol', book.get('carol password 2').value), 429, 'the right password of a locked name');
  refused(await signInAt(control, '/api/session', 'bob', book.get('bob password 1').value), 401, 'the password bob replaced');
  refused(await signInAt(control, '/api/session', 'bob', book.fresh('console sign-in password too long', 800)), 400, 'a long password');
  refused(await call(`${control}/api/session`, { method: 'POST', headers: json, raw: `{"name":"bob","password":${book.fresh('console sign-in password not quoted')}}` }), 400, 'malformed JSON');
});

test('application sign-ins right and wrong, an unknown name, a locked name, a change of password by its owner', async () => {
  const path = '/.meerkat/session';
  refused(await signInAt(data, path, 'alice', book.get('alice password 1').value), 401, 'the password an admin replaced');
  const first = await session('alice app session 1', 'data', 'alice', book.get('alice password 2').value);
  const other = await session('alice app session 2', 'data', 'alice', book.get('alice password 2').value);
  const change = (body: unknown) => call(`${data}${path}/password`, { method: 'PUT', body, headers: { cookie: first, origin: data } });
  refused(await change({ current: book.fresh('alice wrong current password'), password: book.fresh('alice password refused for a wrong current') }), 401, 'a wrong current password');
  refused(await change({ current: book.get('alice password 2').value, password: book.fresh('alice new password too short', 7) }), 400, 'a short new password');
  refused(await change({ current: book.get('alice password 2').value, password: book.fresh('alice password beside an unknown field'), confirm: book.fresh('alice password confirmation') }), 400, 'an unknown field');
  assert.equal((await change({ current: book.get('alice password 2').value, password: book.fresh('alice password 3') })).status, 204);
  appCookie = await session('alice app session 3', 'data', 'alice', book.get('alice password 3').value);

  refused(await signInAt(data, path, 'nobody', book.fresh('password typed for an unknown application name')), 401, 'an unknown name');
  const statuses: number[] = [];
  for (let i = 1; i <= 5; i++) statuses.push((await signInAt(data, path, 'locky', book.fresh(`locky wrong password ${i}`))).status);
  assert.deepEqual(statuses, [401, 401, 401, 401, 429]);
  refused(await signInAt(data, path, 'locky', book.get('locky password 1').value), 429, 'the right password of a locked name');
  refused(await call(`${data}${path}`, { method: 'POST', headers: json, raw: `{"name":"alice","password":${book.fresh('application sign-in password not quoted')}}` }), 400, 'malformed JSON');
  assert.equal((await call(`${data}${path}`, { method: 'DELETE', headers: { cookie: other, origin: data } })).status, 401, 'the owner\'s change ended the other sessions');
  assert.equal((await call(`${data}${path}`, { method: 'DELETE', headers: { cookie: first, origin: data } })).status, 204, 'the session that changed it signs out');
});

test('tokens used and revoked; audited operations with secrets in bodies, headers and the query; routes refused with credentials', async () => {
  const personal = await mint(root, 'alice personal token', { name: 'alice-app', kind: 'personal', account: 'alice' });
  const spare = await mint(root, 'spare admin token', { name: 'spare', kind: 'admin' });
  const bySpare = { authorization: `Bearer ${spare.token}` };
  assert.equal((await call(`${control}/api/tokens`, { headers: bySpare })).status, 200);
  assert.equal((await root.del(`/api/tokens/${spare.id}`)).status, 204);
  refused(await call(`${control}/api/tokens`, { headers: bySpare }), 401, 'a revoked admin token');

  await putOk(root, '/api/routes/billing', { upstream: up.origin, paths: ['/billing'], stripPrefix: true, openapi: BILLING_CONTRACT });
  const rules = await root.put('/api/routes/billing/audit', { operations: { 'POST /pay': { on: true, body: true, secretFields: ['accountNumber'], fields: { account: 'body:/accountNumber' } } } });
  assert.equal(rules.status, 200, rules.text);
  refused(await root.put('/api/routes/broken', { upstream: `http://svc:${book.fresh('password in an upstream URL')}@svc.internal/`, paths: ['/broken'] }), 400, 'credentials in the upstream');
  refused(await root.put('/api/routes/broken', { upstream: `http://svc:${book.fresh('password in an upstream URL that does not parse')}@svc.internal:80a/`, paths: ['/broken'] }), 400, 'a bad upstream');

  const byToken = { authorization: `Bearer ${personal.token}` };
  const placed = await call(`${data}/shop/orders?access_token=${book.fresh('access_token in the query')}&page=1`, {
    method: 'POST',
    headers: { ...byToken, 'x-api-key': book.fresh('X-Api-Key header'), traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' },
    body: {
      customer: { id: 'c-1' }, password: book.fresh('password in a body'), token: book.fresh('token in a body'), apiKey: book.fresh('apiKey in a body'),
      card: { cardNumber: book.fresh('card number in a body'), cvv: book.fresh('card cvv in a body'), holder: 'A. Smith' },
      iban: book.fresh('iban in a body (secretFields)'), items: [{ sku: 'x', clientSecret: book.fresh('clientSecret in a list in a body') }],
    },
  });
  assert.equal(placed.status, 200, placed.text);
  const bySession = await call(`${data}/shop/orders`, {
    method: 'POST', headers: { cookie: `${appCookie}; theme=dark` },
    body: { customer: { id: 'c-2' }, credentials: { passphrase: book.fresh('passphrase in a body') }, otp: book.fresh('otp in a body') },
  });
  assert.equal(bySession.status, 200, bySession.text);
  const replaced = await call(`${data}/shop/orders/o-1`, { method: 'PUT', headers: byToken, body: { pinCode: book.fresh('pinCode in a body (secretFields)'), note: 'ring twice' } });
  assert.equal(replaced.status, 200, replaced.text);
  refused(await call(`${data}/shop/orders`, { method: 'POST', body: { password: book.fresh('password in the body of a refused call') } }), 401, 'no credential');
  const malformed = await call(`${data}/shop/orders`, { method: 'POST', headers: { ...byToken, ...json }, raw: `{"password":${book.fresh('password in a malformed body')}}` });
  assert.equal(malformed.status, 200, 'the service, not the gateway, reads the body');
  const paid = await call(`${data}/billing/pay`, { method: 'POST', body: { accountNumber: book.fresh('accountNumber in a body (secretFields)'), amount: 5 } });
  assert.equal(paid.status, 200, paid.text);
  refused(await call(`${data}/shop/orders`, { method: 'POST', headers: { cookie: rootConsoleCookie }, body: {} }), 401, 'a console cookie on the data plane');
  assert.equal((await root.del(`/api/tokens/${personal.id}`)).status, 204);
  refused(await call(`${data}/shop/orders`, { method: 'POST', headers: byToken, body: { password: book.fresh('password sent with a revoked token') } }), 401, 'a revoked personal token');

  // The secrets were on the wire: the service got them, as is its right.
  const wire = JSON.stringify(up.requests);
  for (const label of ['password in a body', 'X-Api-Key header', 'access_token in the query', 'pinCode in a body (secretFields)', 'accountNumber in a body (secretFields)', 'password in a malformed body']) {
    assert.ok(wire.includes(book.get(label).value), `the service received the ${label}`);
  }
});

test('vault values put, replaced, resolved by scheduled calls on the internal plane, and deleted', async () => {
  assert.equal((await root.put('/api/vault/shop_key', { value: book.fresh('vault shop_key first value') })).status, 201);
  assert.equal((await root.put('/api/vault/shop_key', { value: book.fresh('vault shop_key value') })).status, 204);
  assert.equal((await root.put('/api/organisations/acme/vault/partner_key', { value: book.fresh('vault acme partner_key first value') })).status, 201);
  assert.equal((await root.put('/api/organisations/acme/vault/partner_key', { value: book.fresh('vault acme partner_key value') })).status, 204);
  refused(await root.put('/api/vault/other_key', { value: book.fresh('vault value beside an unknown field'), note: 'x' }), 400, 'an unknown field');
  refused(await root.put('/api/vault/other_key', { value: book.fresh('vault value too long', 49_200) }), 400, 'a long value');
  refused(await root.put('/api/vault/bad%20name', { value: book.fresh('vault value under a bad name') }), 400, 'a bad name');
  refused(await root.put('/api/organisations/ghost/vault/k', { value: book.fresh('vault value of an unknown organisation') }), 404, 'an unknown organisation');
  refused(await call(`${control}/api/vault/other_key`, { method: 'PUT', headers: { ...root.headers, ...json }, raw: `{"value":${book.fresh('vault value not quoted')}}` }), 400, 'malformed JSON');
  assert.equal((await root.get('/api/vault')).status, 200);
  assert.equal((await root.get('/api/organisations/acme/vault')).status, 200);

  const schedules = await mint(root, 'schedules token', { name: 'shop-jobs', kind: 'schedules', routes: ['shop', 'billing'], roles: ['buyer'], organisations: ['acme'] });
  const internal = internalWith(() => internalUrl, () => schedules.token);
  // The application's vault serves a schedule with no organisation (on a route of none), the
  // organisation's vault a schedule of that organisation.
  const nightlyBody = { routeId: 'billing', every: 'PT1H', roles: ['buyer'], name: 'nightly payment', path: '/billing/pay', headers: { 'X-Api-Key': '${shop_key}' }, metadata: { team: 'billing' }, body: { amount: 1 } };
  refused(await internal('POST', '/api/schedules', { ...nightlyBody, headers: { Authorization: `Bearer ${schedules.token}` } }), 400, 'an Authorization header');
  const nightly = await internal('POST', '/api/schedules', nightlyBody);
  assert.equal(nightly.status, 201, nightly.text);
  const report = await internal('POST', '/api/schedules', { routeId: 'shop', every: 'PT1H', roles: ['buyer'], path: '/shop/reports', organisation: 'acme', headers: { 'X-Partner-Key': '${partner_key}' }, body: { kind: 'daily' } });
  assert.equal(report.status, 201, report.text);
  for (const s of [nightly.json, report.json]) assert.equal((await internal('POST', `/api/schedules/${s.id}/run`)).status, 202);

  const until = async <T>(what: string, probe: () => Promise<T | undefined>): Promise<T> => {
    for (let i = 0; i < 400; i++) {
      const got = await probe();
      if (got !== undefined) return got;
      await new Promise((r) => setTimeout(r, 25));
    }
    assert.fail(`timed out waiting for ${what}`);
  };
  await until('the nightly run', async () => ((await internal('GET', `/api/schedules/${nightly.json.id}/runs`)).json[0]?.state === 'done' ? true : undefined));
  const runId = await until('the report accepted', async () => {
    const s = (await internal('GET', `/api/schedules/${report.json.id}`)).json;
    return s.inFlight?.phase === 'accepted' ? s.inFlight.runId as string : undefined;
  });
  assert.equal((await internal('PATCH', `/api/schedules/${report.json.id}/run`, { run: runId, state: 'done', detail: 'report filed' })).status, 200);
  assert.equal((await internal('GET', `/api/schedules/${report.json.id}/runs`)).json[0]?.state, 'done');
  const sent = (name: string) => up.requests.filter((r) => r.headers['gateway-job'] !== undefined).map((r) => r.headers[name]);
  assert.ok(sent('x-api-key').includes(book.get('vault shop_key value').value), 'the vault value was resolved at call time');
  assert.ok(sent('x-partner-key').includes(book.get('vault acme partner_key value').value), 'the organisation\'s vault value was resolved');

  assert.equal((await internal('PUT', `/api/schedules/${nightly.json.id}`, { ...nightlyBody, metadata: { team: 'payments' } })).status, 200);
  assert.equal((await internal('GET', '/api/schedules')).status, 200);
  assert.equal((await root.post(`/api/schedules/${nightly.json.id}/pause`, undefined)).status, 200);
  assert.equal((await root.post(`/api/schedules/${nightly.json.id}/resume`, undefined)).status, 200);
  assert.equal((await root.get('/api/schedules')).status, 200);
  assert.equal((await root.del('/api/vault/shop_key')).status, 204);
  assert.equal((await root.del('/api/organisations/acme/vault/partner_key')).status, 204);
  assert.equal((await root.del(`/api/tokens/${schedules.id}`)).status, 204);
  refused(await internal('GET', '/api/schedules'), 401, 'a revoked schedules token');
});

/** Every line of the trail, as root reads it, page after page. */
async function wholeTrail(): Promise<any[]> {
  await settle();
  const events: any[] = [];
  let cursor: string | null = null;
  do {
    const page: Answer = await root.get(`/api/audit?limit=500${cursor !== null ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    assert.equal(page.status, 200, page.text);
    events.push(...page.json.events);
    cursor = page.json.next;
  } while (cursor !== null);
  return events;
}

/** Secrets that exist only in the store: stored password hashes, the identity signing key. */
async function storedSecrets(): Promise<void> {
  const store = await openStore({ dataDir: db.dataDir, databaseUrl: databaseUrlUsed });
  try {
    for (const a of await store.em().find(Account, {})) {
      assert.ok(accounts.includes(a.name), `an account the test knows: ${a.name}`);
      book.add(`stored password hash of ${a.name}`, a.passwordHash, { core: a.passwordHash.split('$').at(-1)! });
    }
    const masterKey = Buffer.from(book.get('vault master key').value, 'base64');
    for (const k of await store.em().find(SigningKeyRow, {})) {
      const d = createPrivateKey(unseal(masterKey, `signing-key/${k.kid}`, k.sealed)).export({ format: 'jwk' }).d!;
      book.add(`identity signing private key ${k.kid}`, d);
    }
  } finally {
    await store.close();
  }
  // The stored form of a token or a session: a hash is no key, but it has no business outside.
  for (const label of issued.keys()) {
    book.add(`SHA-256 of the ${label}`, createHash('sha256').update(book.get(label).value).digest('hex'), { window: HEX_WINDOW });
  }
}

function answerSource(a: RecordedAnswer, carriers: boolean): Source {
  const plane = (['control', 'data', 'internal'] as const).find((p) => a.url.startsWith(t.url(p))) ?? new URL(a.url).origin;
  const carrier = new Map<string, string>();
  for (const [label, at] of issued) {
    if (!carriers || at.seq !== a.seq) continue;
    if (at.carrier === 'set-cookie') carrier.set(label, answerText(a, ['set-cookie']));
    else carrier.set(label, answerText({ ...a, body: JSON.stringify({ ...JSON.parse(a.body), token: '<issued>' }) }));
  }
  return { where: `answer #${a.seq} to ${a.method} ${new URL(a.url).pathname} on the ${plane} plane (${a.status})`, text: answerText(a), carrier };
}

test('no password, token, session cookie, vault value or body secret in any answer, log line, audit event, CSV row or collector record', async () => {
  const csv = await root.get('/api/audit/export');
  assert.equal(csv.status, 200, csv.text);
  const events = await wholeTrail();

  // Every line written once the push was on reaches the collector.
  const switched = events.find((e) => e.action === 'settings.update' && e.target.name === 'audit');
  assert.ok(switched, 'the push was switched on');
  const wanted = events.filter((e) => e.id > switched.id).map((e) => e.id as string);
  const arrived = () => new Set(otlp.logs.map((l) => l.attributes['gateway.audit.id']));
  for (let i = 0; i < 300 && !wanted.every((id) => arrived().has(id)); i++) {
    await settle();
    assert.equal((await call(`${control}/__clock/advance`, { method: 'POST', body: { by: 'PT2S' }, headers: root.headers })).status, 200);
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.deepEqual(wanted.filter((id) => !arrived().has(id)), [], 'every line reached the collector');
  assert.deepEqual(otlp.problems, []);

  // The gateway's last lines are searched too.
  await t.gw.stop();
  stopped = true;
  await storedSecrets();

  const rows = csv.text.split('\r\n').filter((r) => r !== '');
  const sources: Source[] = [
    ...recorder.answers.map((a) => answerSource(a, true)),
    ...t.logs.map((r, i) => ({ where: `log line #${i + 1} (${r.level} "${r.msg}")`, text: JSON.stringify(r) })),
    ...events.map((e) => ({ where: `audit event ${e.id} (${e.action})`, text: JSON.stringify(e) })),
    ...rows.map((r, i) => ({ where: `CSV export row ${i + 1}`, text: r })),
    ...otlp.logs.map((l, i) => ({ where: `collector record #${i + 1} (${String(l.body)})`, text: JSON.stringify(l) })),
  ];

  // Not vacuous: a broad capture, and the scan sees each token and cookie where it is issued.
  const counts = { answers: recorder.answers.length, logs: t.logs.length, events: events.length, rows: rows.length - 1, collector: otlp.logs.length };
  assert.ok(counts.answers >= 80 && counts.logs >= 15 && counts.events >= 45 && counts.rows >= 45 && counts.collector >= 40, JSON.stringify(counts));
  assert.ok(events.some((e) => e.part === 'operations' && String(e.attributes?.['http.request.body']).includes('***')), 'operation lines keep masked bodies');
  const atIssue = scanForSecrets(book, recorder.answers.filter((a) => [...issued.values()].some((i) => i.seq === a.seq)).map((a) => answerSource(a, false)));
  for (const [label, at] of issued) {
    assert.ok(atIssue.some((f) => f.label === label && f.where.startsWith(`answer #${at.seq} `)), `the scan sees the ${label} in the answer that issues it`);
  }

  const found = scanForSecrets(book, sources);
  assert.equal(found.length, 0, `${found.length} secrets got out (${JSON.stringify(counts)}):\n${describeFindings(found)}`);
});

test('the gateway\'s own credentials never travel to the service', () => {
  const credentials = new SecretBook();
  for (const label of issued.keys()) {
    const s = book.get(label);
    credentials.add(label, s.value, { core: s.core, window: s.window });
  }
  const found = scanForSecrets(credentials, up.requests.map((r, i) => ({ where: `request #${i + 1} the service received (${r.method} ${r.url})`, text: JSON.stringify(r) })));
  assert.equal(found.length, 0, describeFindings(found));
});
