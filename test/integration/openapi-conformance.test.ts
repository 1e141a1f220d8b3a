/**
 * The contract backends generate their clients from: every answer of the real gateway is checked
 * against the OpenAPI document the same gateway serves (control and internal planes at
 * /api/openapi.json, the data plane's own addresses at /.meerkat/openapi.json). The paths cannot
 * drift (the documents are built from the route tables); the hand-written answers can: a status
 * not declared, another media type, a body the schema refuses, or a schema too loose to fail.
 *
 * One gateway (licensed edition, test clock) for the whole file. The tests walk the happy path of
 * each area and one refusal of each common kind; the last tests give one verdict per documented
 * operation: exercised, and every answer as declared.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import WebSocket from 'ws';
import { startTestGateway, ROOT_PASSWORD, type TestGateway } from '../helpers/gateway.ts';
import { call, type Answer } from '../helpers/http.ts';
import { startUpstream, echo, type Upstream } from '../helpers/upstream.ts';
import { openSslKit, type OpenSslKit } from '../helpers/openssl.ts';
import { until } from '../helpers/until.ts';
import { NO_REQUIRED, OpenApiCheck, type OpenApiDocument } from '../helpers/openapi-check.ts';

type Plane = 'control' | 'internal' | 'data';
const DOCUMENTS: Record<Plane, string> = { control: '/api/openapi.json', internal: '/api/openapi.json', data: '/.meerkat/openapi.json' };

/**
 * Findings the documents still have, each with why it stays for now (none today). Each must still
 * be found: once fixed, its entry leaves here.
 */
const KNOWN: Record<string, { readonly why: string; readonly findings: readonly string[] }> = {};

/** Documented operations this file does not call, and why (none today: every one is called). */
const NOT_EXERCISED: Record<string, string> = {};

let t: TestGateway;
let up: Upstream;
let kit: OpenSslKit;
/** Where a certificate of the file source lies, as a runtime would mount it. */
let mounts: string;
const checks = {} as Record<Plane, OpenApiCheck>;

interface SendOptions {
  readonly body?: unknown;
  readonly raw?: string | Buffer;
  readonly headers?: Record<string, string>;
}

/** A caller of one plane with fixed credentials; each exchange is checked against that plane's document. */
function caller(plane: Plane, headers: Record<string, string> = {}) {
  const send = async (method: string, path: string, opts: SendOptions = {}): Promise<Answer> => {
    const a = await call(`${t.url(plane)}${path}`, { method, headers: { ...headers, ...opts.headers }, ...(opts.body !== undefined ? { body: opts.body } : {}), ...(opts.raw !== undefined ? { raw: opts.raw } : {}) });
    checks[plane].check(method, path, a);
    return a;
  };
  return {
    headers,
    send,
    get: (path: string) => send('GET', path),
    del: (path: string) => send('DELETE', path),
    post: (path: string, body?: unknown) => send('POST', path, body === undefined ? {} : { body }),
    put: (path: string, body: unknown) => send('PUT', path, { body }),
    patch: (path: string, body: unknown) => send('PATCH', path, { body }),
  };
}
type Caller = ReturnType<typeof caller>;

/** The answer must have this status (the happy path really ran), its text saying why not. */
async function expect(status: number, answer: Promise<Answer>): Promise<Answer> {
  const a = await answer;
  assert.equal(a.status, status, a.text.slice(0, 500));
  return a;
}

/** Signs in on a plane's session door; a caller with the cookie and the plane's Origin. */
async function signedIn(plane: 'control' | 'data', name: string, password: string): Promise<Caller> {
  const path = plane === 'control' ? '/api/session' : '/.meerkat/session';
  const a = await expect(200, caller(plane, { origin: t.url(plane) }).post(path, { name, password }));
  const cookie = String(a.headers['set-cookie']).split(';')[0]!;
  return caller(plane, { cookie, origin: t.url(plane) });
}

let root: Caller;
/** A backend on the internal plane, with its schedules token. */
let jobs: Caller;

before(async () => {
  // Licensed: its operations (audit export, endpoint audit, ACME) answer, not only refuse. An
  // internal name: the TLS settings then answer one, and its schema is checked.
  t = await startTestGateway({ GATEWAY_CLOCK: 'manual', GATEWAY_EDITION: 'licensed', GATEWAY_INTERNAL_NAMES: 'internal.test' });
  up = await startUpstream();
  kit = openSslKit();
  mounts = mkdtempSync(join(tmpdir(), 'meerkat-mounts-'));
  for (const plane of ['control', 'internal', 'data'] as const) {
    const a = await call(`${t.url(plane)}${DOCUMENTS[plane]}`);
    assert.equal(a.status, 200, a.text);
    checks[plane] = new OpenApiCheck(plane, a.json as OpenApiDocument);
    checks[plane].check('GET', DOCUMENTS[plane], a);
  }
  root = await signedIn('control', 'root', ROOT_PASSWORD);
});
after(async () => {
  await t?.close();
  await up?.close();
  kit?.remove();
  if (mounts) rmSync(mounts, { recursive: true, force: true });
});

const CONTRACT = {
  openapi: '3.1.0', info: { title: 'shop', version: '1' },
  paths: { '/shop/orders': { get: { summary: 'List orders' } }, '/shop/orders/{id}': { get: { summary: 'One order' } } },
};

test('the check finds an object of a 2xx answer that names its members but not which are required', () => {
  const answer = (schema: Record<string, unknown>) => ({ responses: { 200: { description: 'x', content: { 'application/json': { schema } } } } });
  const named = { a: { type: 'string' } };
  const check = new OpenApiCheck('synthetic', {
    openapi: '3.1.0',
    paths: {
      '/none': { get: answer({ type: 'object', properties: named }) },
      '/nested': { get: answer({ type: 'object', required: ['items'], properties: { items: { type: 'array', items: { type: ['object', 'null'], properties: named } } } }) },
      '/stated': { get: answer({ type: 'object', required: ['a'], properties: named }) },
      '/optional': { get: answer({ type: 'object', required: [], properties: named }) },
      '/free': { get: answer({ type: 'object', additionalProperties: true, properties: named }) },
    },
  });
  assert.deepEqual(check.findingsOf('GET /none'), [`200: body: ${NO_REQUIRED}`]);
  assert.deepEqual(check.findingsOf('GET /nested'), [`200: body.items[]: ${NO_REQUIRED}`]);
  for (const key of ['GET /stated', 'GET /optional', 'GET /free']) assert.deepEqual(check.findingsOf(key), [], key);
});

test('probes and the documents, on every plane', async () => {
  for (const plane of ['control', 'internal', 'data'] as const) {
    const anon = caller(plane);
    await expect(200, anon.get('/healthz'));
    await expect(200, anon.get('/readyz'));
  }
  await expect(200, caller('data').get('/.well-known/jwks.json'));
});

test('console session: sign in, who am I, refusals', async () => {
  const anon = caller('control');
  await expect(200, root.get('/api/session'));
  await expect(401, anon.get('/api/session'));
  await expect(401, anon.post('/api/session', { name: 'nobody-at-all', password: 'not-the-password' }));
  await expect(400, anon.post('/api/session', { name: 'root' }));
  await expect(403, anon.send('POST', '/api/session', { body: { name: 'root', password: ROOT_PASSWORD }, headers: { origin: 'https://elsewhere.example' } }));
});

test('roles: create, replace, read, list, delete; in use, unknown, bad body', async () => {
  await expect(201, root.put('/api/roles/jobs', {}));
  await expect(201, root.put('/api/roles/shop-staff', { implies: ['jobs'] }));
  await expect(200, root.put('/api/roles/shop-staff', { implies: ['jobs'] }));
  await expect(200, root.get('/api/roles'));
  await expect(200, root.get('/api/roles/shop-staff'));
  await expect(201, root.put('/api/roles/scratch', {}));
  await expect(204, root.del('/api/roles/scratch'));
  await expect(404, root.get('/api/roles/scratch'));
  await expect(404, root.del('/api/roles/scratch'));
  await expect(400, root.put('/api/roles/loop', { implies: ['no-such-role'] }));
  await expect(409, root.del('/api/roles/jobs'));
});

test('routes: create, replace, read, list, endpoint audit rules, delete; refusals', async () => {
  const route = { upstream: `${up.origin}/svc`, paths: ['/shop'], rule: { roles: ['shop-staff'] }, openapi: CONTRACT };
  await expect(201, root.put('/api/routes/shop', route));
  await expect(200, root.put('/api/routes/shop', { ...route, timeout: 'PT10S', endpointRules: [{ method: 'GET', path: '/shop/orders/{id}', roles: ['shop-staff'] }] }));
  await expect(201, root.put('/api/routes/jobs', { upstream: `${up.origin}/svc`, paths: ['/jobs'], rule: { roles: ['jobs'] } }));
  await expect(200, root.get('/api/routes'));
  await expect(200, root.get('/api/routes/shop'));
  await expect(200, root.get('/api/routes/shop/audit'));
  await expect(200, root.put('/api/routes/shop/audit', { operations: { 'GET /shop/orders/{id}': { on: true, fields: { order: 'path:id' } } } }));
  await expect(200, root.get('/api/routes/shop/audit'));
  await expect(409, root.put('/api/routes/shop/audit', { operations: { 'DELETE /shop/orders': { on: true } } }));
  await expect(204, root.del('/api/routes/shop/audit'));
  // On again: the traffic later makes operation lines in the trail.
  await expect(200, root.put('/api/routes/shop/audit', { operations: { 'GET /shop/orders/{id}': { on: true, fields: { order: 'path:id' } } } }));
  await expect(201, root.put('/api/routes/scratch', { upstream: 'http://scratch.internal', paths: ['/scratch'] }));
  await expect(204, root.del('/api/routes/scratch'));
  await expect(404, root.get('/api/routes/scratch'));
  await expect(404, root.del('/api/routes/scratch'));
  await expect(404, root.get('/api/routes/scratch/audit'));
  await expect(400, root.put('/api/routes/bad', { upstream: 'ftp://files.internal', paths: ['/bad'] }));
  await expect(401, caller('control').get('/api/routes'));
});

test('organisations and both vaults: create, replace, read, list, delete; refusals', async () => {
  const hours = { timezone: 'Europe/Paris', windows: [{ days: ['MON', 'TUE'], from: '08:00', to: '18:00' }] };
  await expect(201, root.put('/api/organisations/acme', { name: 'Acme', hours }));
  await expect(200, root.put('/api/organisations/acme', { name: 'Acme Ltd', hours: null }));
  await expect(200, root.get('/api/organisations'));
  await expect(200, root.get('/api/organisations/acme'));
  // Each vault: an entry written, replaced, listed, deleted, and deleted again.
  for (const [vault, entry] of [['/api/organisations/acme/vault', 'api_key'], ['/api/vault', 'stripe_key']] as const) {
    await expect(201, root.put(`${vault}/${entry}`, { value: 'secret-1' }));
    await expect(204, root.put(`${vault}/${entry}`, { value: 'secret-2' }));
    await expect(200, root.get(vault));
    await expect(204, root.del(`${vault}/${entry}`));
    await expect(404, root.del(`${vault}/${entry}`));
  }
  await expect(404, root.get('/api/organisations/nowhere/vault'));
  await expect(400, root.put('/api/vault/bad_value', { value: 'line\nbreak' }));
  await expect(201, root.put('/api/organisations/scratch', { name: 'Scratch' }));
  await expect(204, root.del('/api/organisations/scratch'));
  await expect(404, root.get('/api/organisations/scratch'));
  await expect(404, root.del('/api/organisations/scratch'));
  await expect(400, root.put('/api/organisations/bad', { name: 7 }));
});

test('accounts and tokens: create, read, list, change, revoke, delete; refusals', async () => {
  const olivia = (await expect(201, root.post('/api/accounts', { name: 'olivia', password: 'olivia-password-1', roles: ['shop-staff'], organisation: 'acme' }))).json;
  const dana = (await expect(201, root.post('/api/accounts', { name: 'dana', password: 'dana-password-1', roles: ['shop-staff'] }))).json;
  await expect(409, root.post('/api/accounts', { name: 'olivia', password: 'olivia-password-1' }));
  await expect(400, root.post('/api/accounts', { name: 'short', password: 'short' }));
  await expect(200, root.get('/api/accounts'));
  await expect(200, root.get(`/api/accounts/${olivia.id}`));
  await expect(200, root.patch(`/api/accounts/${dana.id}`, { roles: ['shop-staff', 'jobs'] }));
  await expect(404, root.get('/api/accounts/acc_nobody'));
  await expect(404, root.patch('/api/accounts/acc_nobody', { disabled: true }));
  const scratch = (await expect(201, root.post('/api/accounts', { name: 'scratch', password: 'scratch-password-1' }))).json;
  await expect(204, root.del(`/api/accounts/${scratch.id}`));
  await expect(404, root.del(`/api/accounts/${scratch.id}`));

  await expect(201, root.post('/api/tokens', { name: 'dana-app', kind: 'personal', account: 'dana' }));
  const minted = (await expect(201, root.post('/api/tokens', { name: 'jobs-svc', kind: 'schedules', routes: ['jobs'], roles: ['jobs'], organisations: ['acme'] }))).json;
  jobs = caller('internal', { authorization: `Bearer ${minted.token}` });
  const script = (await expect(201, root.post('/api/tokens', { name: 'olivia-script', kind: 'admin', account: 'olivia' }))).json;
  await expect(200, root.get('/api/tokens'));
  // An admin token of an account without the capability: a refusal of the right, not of the credential.
  const scripted = caller('control', { authorization: `Bearer ${script.token}` });
  await expect(403, scripted.get('/api/routes'));
  // A valid token where only a session will do: a credential of another kind (403), not an unknown one (401).
  for (const a of [await expect(403, scripted.del('/api/session')), await expect(403, scripted.put('/api/session/password', { current: 'olivia-password-1', password: 'olivia-password-2' }))]) {
    assert.equal((a.json as { code: string }).code, 'forbidden', a.text);
    assert.equal(a.headers['www-authenticate'], undefined, 'no challenge: the credential was read');
  }
  await expect(204, root.del(`/api/tokens/${script.id}`));
  await expect(404, root.del(`/api/tokens/${script.id}`));
  await expect(400, root.post('/api/tokens', { name: 'no-kind' }));
});

test('sessions of another account, on the console and on the data plane: password change, sign-out', async () => {
  const operator = await signedIn('control', 'olivia', 'olivia-password-1');
  await expect(200, operator.get('/api/session'));
  await expect(401, operator.put('/api/session/password', { current: 'not-her-password', password: 'olivia-password-2' }));
  await expect(204, operator.put('/api/session/password', { current: 'olivia-password-1', password: 'olivia-password-2' }));
  await expect(400, operator.put('/api/session/password', { current: 'olivia-password-2' }));
  await expect(204, operator.del('/api/session'));
  await expect(401, operator.del('/api/session'));

  const app = await signedIn('data', 'dana', 'dana-password-1');
  await expect(200, app.get('/.meerkat/session'));
  await expect(204, app.put('/.meerkat/session/password', { current: 'dana-password-1', password: 'dana-password-2' }));
  await expect(400, app.put('/.meerkat/session/password', { current: 'dana-password-2', password: 'short' }));
  await expect(204, app.del('/.meerkat/session'));
  const anon = caller('data', { origin: t.url('data') });
  await expect(401, anon.get('/.meerkat/session'));
  await expect(401, anon.put('/.meerkat/session/password', { current: 'x', password: 'dana-password-3' }));
  await expect(401, anon.del('/.meerkat/session'));
  await expect(401, anon.post('/.meerkat/session', { name: 'dana', password: 'not-her-password' }));
  await expect(400, anon.post('/.meerkat/session', { name: '', password: 'x' }));
});

test('trusted authorities and certificates: add, read, list, place, sign, remove; settings; refusals', async () => {
  const ca = kit.authority('Conformance Root');
  const authority = (await expect(201, root.post('/api/trusted-authorities', { name: 'conformance-root', pem: ca.cert }))).json;
  await expect(200, root.get('/api/trusted-authorities'));
  await expect(200, root.get(`/api/trusted-authorities/${authority.id}`));
  await expect(400, root.post('/api/trusted-authorities', { name: 'with-key', pem: ca.cert + ca.key }));
  await expect(409, root.post('/api/trusted-authorities', { name: 'conformance-root', pem: ca.cert }));
  await expect(204, root.del(`/api/trusted-authorities/${authority.id}`));
  await expect(404, root.get(`/api/trusted-authorities/${authority.id}`));
  await expect(404, root.del(`/api/trusted-authorities/${authority.id}`));

  const selfSigned = (await expect(201, root.post('/api/certificates', { source: 'self-signed', names: ['shop.test'], days: 30 }))).json;
  await expect(200, root.put(`/api/certificates/${selfSigned.id}/placement`, { planes: ['app'] }));
  const leaf = kit.leaf('imported', 'DNS:imported.test');
  const imported = (await expect(201, root.post('/api/certificates', { source: 'import', cert: leaf.cert, key: leaf.key }))).json;
  const file = kit.leaf('mounted', 'DNS:mounted.test');
  writeFileSync(join(mounts, 'cert.pem'), file.cert);
  writeFileSync(join(mounts, 'key.pem'), file.key);
  const mounted = (await expect(201, root.post('/api/certificates', { source: 'file', certPath: join(mounts, 'cert.pem'), keyPath: join(mounts, 'key.pem') }))).json;
  const csr = (await expect(201, root.post('/api/certificates', { source: 'csr', names: ['signed.test'], subject: { organisation: 'Meerkat Tests' } }))).json;
  const asked = await expect(200, root.get(`/api/certificates/${csr.id}/csr`));
  kit.write('asked.csr', asked.text);
  kit.write('asked.ext', 'basicConstraints=CA:false\nsubjectAltName=DNS:signed.test\n');
  kit.run('x509', '-req', '-in', 'asked.csr', '-CA', 'ca.pem', '-CAkey', 'ca-key.pem', '-CAcreateserial', '-out', 'answer.pem', '-days', '5', '-extfile', 'asked.ext');
  await expect(200, root.post(`/api/certificates/${csr.id}/answer`, { cert: kit.read('answer.pem') }));
  await expect(409, root.post(`/api/certificates/${csr.id}/answer`, { cert: kit.read('answer.pem') }));
  await expect(200, root.get('/api/certificates'));
  await expect(200, root.get(`/api/certificates/${selfSigned.id}`));
  await expect(200, root.get(`/api/certificates/${mounted.id}`));
  await expect(200, root.get('/api/certificates/mounts'));
  await expect(204, root.del(`/api/certificates/${imported.id}`));
  await expect(404, root.get(`/api/certificates/${imported.id}`));
  await expect(404, root.get(`/api/certificates/${imported.id}/csr`));
  await expect(404, root.post(`/api/certificates/${imported.id}/answer`, { cert: leaf.cert }));
  await expect(404, root.put(`/api/certificates/${imported.id}/placement`, { planes: ['app'] }));
  await expect(404, root.del(`/api/certificates/${imported.id}`));
  await expect(400, root.post('/api/certificates', { source: 'self-signed', names: ['https://not-a-name'] }));

  await expect(200, root.get('/api/settings/tls'));
  await expect(200, root.put('/api/settings/tls/ports/app', { http: true }));
  await expect(200, root.put('/api/settings/tls/doors/app', { proxied: false, names: ['shop.test'] }));
  await expect(200, root.put('/api/settings/tls/redirect', { forceHttps: false, hstsMaxAge: 86400 }));
  await expect(400, root.put('/api/settings/tls/ports/nowhere', { http: true }));
  await expect(400, root.put('/api/settings/tls/doors/internal', { proxied: true }));
  await expect(409, root.put('/api/settings/tls/ports/console', { http: false }));
});

test('ACME authorities: add, read, list, replace, remove (nothing is sent to the authority)', async () => {
  const written = { name: 'conformance-acme', directory: 'https://acme.example.test/directory', email: 'ops@example.test', termsAccepted: true };
  const created = (await expect(201, root.post('/api/acme/authorities', written))).json;
  await expect(200, root.get('/api/acme/authorities'));
  await expect(200, root.get(`/api/acme/authorities/${created.id}`));
  await expect(200, root.put(`/api/acme/authorities/${created.id}`, { ...written, challenge: 'http-01' }));
  await expect(409, root.post('/api/acme/authorities', written));
  await expect(204, root.del(`/api/acme/authorities/${created.id}`));
  await expect(404, root.get(`/api/acme/authorities/${created.id}`));
  await expect(404, root.put(`/api/acme/authorities/${created.id}`, written));
  await expect(404, root.del(`/api/acme/authorities/${created.id}`));
  await expect(400, root.post('/api/acme/authorities', { ...written, name: 'bad-directory', directory: 'not a url' }));
});

/** The schedule the console acts on after the internal plane made it. */
let schedule: string;

/** Polls a schedule (unchecked: the polls say nothing new) until `ready` holds of it. */
async function scheduleWhen(id: string, ready: (s: Record<string, any>) => boolean, what: string): Promise<Record<string, any>> {
  return until(async () => {
    const a = await call(`${t.url('internal')}/api/schedules/${id}`, { headers: jobs.headers });
    return ready(a.json) ? a.json : undefined;
  }, what);
}

test('schedules on the internal plane: create, list, read, replace, pause, resume, run, report, history, delete; refusals', async () => {
  up.handle((req, res, received) => {
    if (!received.url.endsWith('/long')) return echo(req, res, received);
    res.writeHead(202).end();
  });
  const base = { routeId: 'jobs', path: '/jobs/close-day', every: 'PT1H', roles: ['jobs'], metadata: { team: 'finance' } };
  const s = (await expect(201, jobs.post('/api/schedules', { ...base, name: 'close the day', organisation: 'acme', headers: { 'X-Key': '${api_key}' }, body: { day: 'today' } }))).json;
  await expect(200, jobs.get('/api/schedules'));
  await expect(200, jobs.get('/api/schedules?meta.team=finance&limit=1'));
  await expect(200, jobs.get(`/api/schedules/${s.id}`));
  await expect(200, jobs.put(`/api/schedules/${s.id}`, { ...base, cron: '30 2 * * *', every: undefined, timezone: 'Europe/Paris' }));
  await expect(200, jobs.post(`/api/schedules/${s.id}/pause`));
  await expect(200, jobs.post(`/api/schedules/${s.id}/resume`));
  await expect(202, jobs.post(`/api/schedules/${s.id}/run`));
  await scheduleWhen(s.id, (x) => x.lastRun !== null && x.inFlight === null, 'the run now ends');
  await expect(200, jobs.get(`/api/schedules/${s.id}/runs`));

  const long = (await expect(201, jobs.post('/api/schedules', { ...base, path: '/jobs/long', at: '2030-06-01T10:00:00+02:00', every: undefined }))).json;
  await expect(202, jobs.post(`/api/schedules/${long.id}/run`, {}));
  const accepted = await scheduleWhen(long.id, (x) => x.inFlight?.phase === 'accepted', 'the service accepts the run');
  await expect(409, jobs.post(`/api/schedules/${long.id}/run`));
  await expect(200, jobs.patch(`/api/schedules/${long.id}/run`, { run: accepted.inFlight.runId, state: 'running', progress: 50 }));
  await expect(200, jobs.patch(`/api/schedules/${long.id}/run`, { run: accepted.inFlight.runId, state: 'done', detail: 'all rows' }));
  await expect(200, jobs.get(`/api/schedules/${long.id}/runs?limit=1`));

  await expect(400, jobs.post('/api/schedules', { ...base, method: 'GET' }));
  await expect(400, jobs.put(`/api/schedules/${s.id}`, { ...base, timezone: 'Mars/Olympus' }));
  await expect(400, jobs.get('/api/schedules?limit=0'));
  await expect(400, jobs.get(`/api/schedules/${s.id}/runs?offset=2`));
  await expect(403, jobs.post('/api/schedules', { ...base, routeId: 'shop', path: '/shop/x' }));
  await expect(404, jobs.get('/api/schedules/sch_000000000000000000000000'));
  await expect(404, jobs.put('/api/schedules/sch_000000000000000000000000', base));
  await expect(404, jobs.post('/api/schedules/sch_000000000000000000000000/pause'));
  await expect(404, jobs.post('/api/schedules/sch_000000000000000000000000/resume'));
  await expect(404, jobs.post('/api/schedules/sch_000000000000000000000000/run'));
  await expect(404, jobs.patch('/api/schedules/sch_000000000000000000000000/run', { run: 'x', state: 'done' }));
  await expect(404, jobs.get('/api/schedules/sch_000000000000000000000000/runs'));
  await expect(404, jobs.del('/api/schedules/sch_000000000000000000000000'));
  await expect(401, caller('internal').get('/api/schedules'));
  await expect(403, caller('internal', { cookie: root.headers.cookie! }).get('/api/schedules'));
  await expect(204, jobs.del(`/api/schedules/${long.id}`));
  schedule = s.id;
});

test('schedules from the console: read, pause, resume, run, history, delete; writes refused; settings', async () => {
  await expect(200, root.get('/api/schedules'));
  await expect(200, root.get(`/api/schedules/${schedule}`));
  await expect(200, root.post(`/api/schedules/${schedule}/pause`));
  await expect(200, root.post(`/api/schedules/${schedule}/resume`));
  await expect(202, root.post(`/api/schedules/${schedule}/run`));
  await scheduleWhen(schedule, (x) => x.inFlight === null && x.runRequested == null, 'the console\'s run ends');
  await expect(200, root.get(`/api/schedules/${schedule}/runs?limit=2`));
  // A schedules token still calling the control plane keeps working (spec 9 rule 1).
  const legacy = caller('control', jobs.headers);
  const written = (await expect(201, legacy.post('/api/schedules', { routeId: 'jobs', path: '/jobs/legacy', every: 'PT1H', roles: ['jobs'] }))).json;
  await expect(200, legacy.put(`/api/schedules/${written.id}`, { routeId: 'jobs', path: '/jobs/legacy', every: 'PT2H', roles: ['jobs'] }));
  await expect(204, legacy.del(`/api/schedules/${written.id}`));
  await expect(403, root.post('/api/schedules', { routeId: 'jobs', every: 'PT1H' }));
  await expect(403, root.put(`/api/schedules/${schedule}`, { routeId: 'jobs', every: 'PT1H' }));
  await expect(403, root.patch(`/api/schedules/${schedule}/run`, { run: 'x', state: 'done' }));
  await expect(404, root.get('/api/schedules/sch_000000000000000000000000'));
  await expect(204, root.del(`/api/schedules/${schedule}`));
  await expect(404, root.del(`/api/schedules/${schedule}`));

  await expect(200, root.get('/api/settings/schedules'));
  await expect(200, root.put('/api/settings/schedules', { retention: 'P60D' }));
  await expect(400, root.put('/api/settings/schedules', { retention: 'forever' }));
});

test('logs and metrics: settings, the buffer, its export, the traffic snapshot; refusals', async () => {
  await expect(200, root.get('/api/settings/logs'));
  await expect(200, root.put('/api/settings/logs', { level: 'debug', accessLog: false }));
  assert.ok((await expect(200, root.get('/api/logs?limit=50'))).json.lines.length > 0, 'lines to check');
  await expect(200, root.get('/api/logs?level=warn&q=session'));
  await expect(200, root.get('/api/logs/export?level=info'));
  await expect(400, root.get('/api/logs?level=loud'));
  await expect(400, root.get('/api/logs/export?limit=0'));
  await expect(400, root.put('/api/settings/logs', { level: 'loud' }));
  await expect(409, root.put('/api/settings/logs', { mode: 'otlp' }));

  // Traffic through the data plane, for the metrics to hold a route and its endpoints.
  const staff = (await expect(201, root.post('/api/tokens', { name: 'dana-traffic', kind: 'personal', account: 'dana' }))).json.token;
  for (const path of ['/shop/orders', '/shop/orders/17', '/shop/orders/18']) {
    assert.equal((await call(`${t.url('data')}${path}`, { headers: { authorization: `Bearer ${staff}` } })).status, 200);
  }
  // The snapshot closes an interval every 5 s of the gateway's clock.
  await expect(200, caller('control').post('/__clock/advance', { by: 'PT10S' }));
  const snapshot = (await expect(200, root.get('/api/metrics'))).json;
  assert.ok(snapshot.routes.length > 0, 'the route is in the snapshot, its row checked');
  await expect(200, root.get('/api/metrics/routes/shop'));
  await expect(404, root.get('/api/metrics/routes/no-such-route'));
  await expect(400, root.get('/api/metrics?window=1h'));
});

test('audit: the trail page by page, its export, its settings; refusals', async () => {
  const page = (await expect(200, root.get('/api/audit?limit=2'))).json;
  assert.ok(page.next, 'a second page');
  await expect(200, root.get(`/api/audit?limit=2&cursor=${encodeURIComponent(page.next)}`));
  await expect(200, root.get('/api/audit?part=security'));
  const operations = (await expect(200, root.get('/api/audit?part=operations'))).json;
  assert.ok(operations.events.length > 0, 'the audited calls are in the trail, their attributes checked');
  await expect(200, root.get('/api/audit/export?part=changes'));
  await expect(400, root.get('/api/audit?part=everything'));
  await expect(400, root.get('/api/audit/export?limit=5'));
  await expect(200, root.get('/api/settings/audit'));
  await expect(200, root.put('/api/settings/audit', { retention: 'P2Y', operationRetention: 'P3M' }));
  await expect(400, root.put('/api/settings/audit', { retention: 'P9Y' }));
  await expect(409, root.put('/api/settings/audit', { push: { audit: true } }));
});

/** JSON, or undefined (as `call` reads answers): the check says what the body should have been. */
function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A WebSocket opening as a client sees it: 101, or the refusal's status and body. */
function upgrade(path: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${t.url('control').replace(/^http/, 'ws')}${path}`, { headers });
    let answer: Answer | undefined;
    ws.on('upgrade', (res) => { answer = { status: res.statusCode ?? 0, headers: res.headers, text: '', json: undefined }; });
    ws.on('open', () => ws.close());
    ws.on('close', () => (answer ? resolve(answer) : reject(new Error(`${path}: closed before any answer`))));
    ws.on('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (b: Buffer) => { text += b.toString(); });
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: parsed(text) });
        ws.terminate();
      });
    });
    ws.on('error', () => undefined);
  });
}

test('live feeds: opened as WebSockets (101), refused as plain requests (426) and without a credential (401)', async () => {
  for (const path of ['/api/schedules/live', '/api/logs/live', '/api/metrics/live']) {
    const opened = await upgrade(path, root.headers);
    checks.control.check('GET', path, opened);
    assert.equal(opened.status, 101, opened.text);
    await expect(426, root.get(path));
    const refused = await upgrade(path, {});
    checks.control.check('GET', path, refused);
    assert.equal(refused.status, 401, refused.text);
  }
});

test('the test clock, and the refusals every body-taking operation can give (411, 413, 415, 400, 403)', async () => {
  const anon = caller('control');
  await expect(200, anon.get('/__clock'));
  await expect(200, anon.post('/__clock/advance', { by: 'PT1S' }));
  await expect(400, anon.post('/__clock/advance', { by: 'soon' }));
  await expect(415, root.send('PUT', '/api/roles/typed', { raw: '{}', headers: { 'content-type': 'text/plain' } }));
  await expect(400, root.send('PUT', '/api/roles/typed', { raw: '{"implies": [', headers: { 'content-type': 'application/json' } }));
  await expect(413, root.send('PUT', '/api/roles/typed', { raw: `{"implies": ["${'x'.repeat(1024 * 1024)}"]}`, headers: { 'content-type': 'application/json' } }));
  await expect(403, root.send('PUT', '/api/roles/typed', { body: {}, headers: { origin: 'https://elsewhere.example' } }));
  // A body of unknown length is sent in chunks: the plain door refuses it, answering first.
  const chunked = await request(`${t.url('control')}/api/roles/typed`, {
    method: 'PUT', headers: { ...root.headers, 'content-type': 'application/json' }, body: Readable.from(['{"implies"', ': []}']),
  });
  const text = await chunked.body.text();
  const answer: Answer = { status: chunked.statusCode, headers: chunked.headers as Answer['headers'], text, json: parsed(text) };
  checks.control.check('PUT', '/api/roles/typed', answer);
  assert.equal(answer.status, 411, text);
});

test('sign-out of the console', async () => {
  await expect(204, root.del('/api/session'));
  await expect(401, root.get('/api/session'));
});

for (const plane of ['control', 'internal', 'data'] as const) {
  test(`${plane} plane: every documented operation is exercised and answers as its document says`, async (tc) => {
    const check = checks[plane];
    assert.deepEqual(check.unmatchedRequests(), [], 'requests that no documented operation matches');
    for (const key of check.operationKeys()) {
      const name = `${plane} ${key}`;
      await tc.test(`${key} [${check.statusesOf(key).join(', ') || 'not called'}]`, () => {
        if (NOT_EXERCISED[name] === undefined) assert.ok(check.statusesOf(key).length > 0, `${name} is never called: call it, or say why in NOT_EXERCISED`);
        assert.deepEqual(check.findingsOf(key), KNOWN[name]?.findings ?? [], `${name}${KNOWN[name] ? ` (known: ${KNOWN[name].why})` : ''}`);
      });
    }
  });
}
