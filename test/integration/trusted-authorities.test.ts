/**
 * Trusted authorities end to end (spec 1.2 rule 22; CONTRACT.md "TLS"): a private authority made
 * with openssl, real HTTPS upstreams presenting its leaves, a real gateway on its own database.
 * Verifying an upstream asks two questions, and each failure says which one failed.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { signInAdmin, adminWith, putOk, type Admin } from '../helpers/admin.ts';
import { call, signIn, type Answer } from '../helpers/http.ts';
import { makeCa, type Pem, type PrivateCa } from '../helpers/private-ca.ts';
import { schedulesToken, internalWith } from '../helpers/scheduler.ts';

let t: TestGateway;
let root: Admin;
let ca: PrivateCa;
/** Presents a leaf for localhost and 127.0.0.1. */
let named: Server;
/** Presents a leaf for wrong.example only, on 127.0.0.1. */
let misnamed: Server;
const seen: string[] = [];

async function httpsUpstream(leaf: Pem): Promise<Server> {
  const server = createServer({ cert: leaf.cert, key: leaf.key }, (req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const body = JSON.stringify({ served: req.url });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}
const portOf = (s: Server) => (s.address() as AddressInfo).port;

before(async () => {
  ca = makeCa('Meerkat Private Authority');
  named = await httpsUpstream(ca.leaf(['localhost', '127.0.0.1']));
  misnamed = await httpsUpstream(ca.leaf(['wrong.example']));
  t = await startTestGateway({ GATEWAY_CLOCK: 'manual' });
  root = await signInAdmin(t.url('control'));
  await putOk(root, '/api/routes/secure', { upstream: `https://localhost:${portOf(named)}`, paths: ['/secure'] });
  await putOk(root, '/api/routes/misnamed', { upstream: `https://127.0.0.1:${portOf(misnamed)}`, paths: ['/misnamed'] });
});
after(async () => {
  await t?.close();
  for (const s of [named, misnamed]) {
    s?.closeAllConnections();
    await new Promise((resolve) => (s ? s.close(resolve) : resolve(undefined)));
  }
  ca?.remove();
});

const data = (path: string) => call(`${t.url('data')}${path}`);

function refused(a: Answer, status: number, code: string, field?: string): void {
  assert.equal(a.status, status, a.text);
  assert.equal(a.json.code, code, a.text);
  if (field !== undefined) assert.equal(a.json.field, field, a.text);
}

async function authorities(): Promise<any[]> {
  const a = await root.get('/api/trusted-authorities');
  assert.equal(a.status, 200, a.text);
  return a.json.authorities;
}

let added: { id: string };
let infra: Admin;

test('before its authority is added, an https upstream signed by it is refused: untrusted, and the sentence says what to do', async () => {
  const a = await data('/secure/hello');
  refused(a, 502, 'upstream.untrusted');
  assert.equal(a.json.detail, `The certificate of https://localhost:${portOf(named)} is not signed by a trusted authority (add its authority under trusted authorities).`);
  assert.deepEqual(seen, [], 'nothing reached the service');
});

test('a PEM holding a private key is refused with the reason and nothing is stored', async () => {
  for (const pem of [`${ca.cert}${ca.key}`, ca.key]) {
    const a = await root.post('/api/trusted-authorities', { name: 'With key', pem });
    refused(a, 400, 'tls.key-in-authority', 'pem');
    assert.match(a.json.detail, /public certificate only/);
    assert.doesNotMatch(a.text, /BEGIN/);
  }
  refused(await root.post('/api/trusted-authorities', { name: 'Nothing', pem: 'not a certificate' }), 400, 'tls.certificate-invalid', 'pem');
  refused(await root.post('/api/trusted-authorities', { name: '', pem: ca.cert }), 400, 'field.invalid', 'name');
  assert.deepEqual(await authorities(), []);
  assert.ok(!t.logs.some((l) => JSON.stringify(l).includes('PRIVATE KEY')), 'no log line holds the key');
});

test('root or infra-admin only', async () => {
  const control = t.url('control');
  for (const [name, capabilities] of [['appadmin', ['app-admin']], ['infra', ['infra-admin']]] as const) {
    const made = await root.post('/api/accounts', { name, password: `${name}-password-1`, capabilities });
    assert.equal(made.status, 201, made.text);
  }
  const appAdmin = adminWith(control, { cookie: await signIn(control, 'appadmin', 'appadmin-password-1'), origin: control });
  refused(await appAdmin.get('/api/trusted-authorities'), 403, 'capability');
  refused(await appAdmin.post('/api/trusted-authorities', { name: 'x', pem: ca.cert }), 403, 'capability');
  infra = adminWith(control, { cookie: await signIn(control, 'infra', 'infra-password-1'), origin: control });
  assert.equal((await infra.get('/api/trusted-authorities')).status, 200);
  refused(await call(`${control}/api/trusted-authorities`), 401, 'unauthenticated');
});

test('once the authority is added, the call goes through: the chain leads to it and the certificate names localhost', async () => {
  const a = await root.post('/api/trusted-authorities', { name: 'Private authority', pem: ca.cert });
  assert.equal(a.status, 201, a.text);
  added = a.json;
  assert.deepEqual(Object.keys(a.json).sort(), ['count', 'fingerprint', 'id', 'name', 'notAfter', 'subjects']);
  assert.equal(a.json.name, 'Private authority');
  assert.deepEqual(a.json.subjects, ['CN=Meerkat Private Authority']);
  assert.equal(a.json.count, 1);
  assert.match(a.json.fingerprint, /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
  assert.ok(Math.abs(a.json.notAfter - (Date.now() / 1000 + 30 * 86_400)) < 300, 'notAfter is the authority\'s end, epoch seconds');
  assert.equal(a.headers.location, `/api/trusted-authorities/${added.id}`);

  const one = await root.get(`/api/trusted-authorities/${added.id}`);
  assert.deepEqual(one.json, a.json);
  assert.deepEqual(await authorities(), [a.json]);
  refused(await root.post('/api/trusted-authorities', { name: 'Private authority', pem: ca.cert }), 409, 'tls.authority-name-taken', 'name');

  const through = await data('/secure/hello');
  assert.equal(through.status, 200, through.text);
  assert.deepEqual(through.json, { served: '/secure/hello' });

  // The trail names it by name and fingerprint; the PEM never enters it.
  await t.gw.ctx.audit.call('audit.settle', null);
  const trail = await root.get('/api/audit?targetKind=trusted-authority');
  assert.equal(trail.status, 200, trail.text);
  const [line] = trail.json.events;
  assert.equal(line.action, 'trusted-authority.create');
  assert.deepEqual(line.target, { kind: 'trusted-authority', id: added.id, name: 'Private authority' });
  assert.deepEqual(line.actor, { account: 'root' });
  assert.ok(line.changes.some((c: { field: string; to: unknown }) => c.field === 'fingerprint' && c.to === a.json.fingerprint));
  assert.doesNotMatch(trail.text, /BEGIN CERTIFICATE/);
});

test('a scheduled call goes through the same verification', async () => {
  await putOk(root, '/api/roles/jobs', {});
  const token = await schedulesToken(root, 'secure-jobs', ['secure'], ['jobs']);
  const internal = internalWith(() => t.url('internal'), () => token);
  const s = await internal('POST', '/api/schedules', { routeId: 'secure', path: '/secure/close', at: new Date(Date.now() + 3_600_000).toISOString(), roles: ['jobs'] });
  assert.equal(s.status, 201, s.text);
  assert.equal((await internal('POST', `/api/schedules/${s.json.id}/run`)).status, 202);
  let runs: any[] = [];
  for (let i = 0; i < 200 && runs.length === 0; i++) {
    runs = (await internal('GET', `/api/schedules/${s.json.id}/runs`)).json;
    if (runs.length === 0) await new Promise((res) => setTimeout(res, 25));
  }
  assert.equal(runs[0]?.status, 200, JSON.stringify(runs));
  assert.ok(seen.includes('POST /secure/close'));
});

test('a certificate that does not carry the host of the upstream fails even with the right authority', async () => {
  const a = await data('/misnamed/hello');
  refused(a, 502, 'upstream.name-mismatch');
  assert.match(a.json.detail, new RegExp(`^The certificate of https://127\\.0\\.0\\.1:${portOf(misnamed)} does not carry the name 127\\.0\\.0\\.1`));
  assert.ok(!seen.includes('GET /misnamed/hello'));
});

test('once deleted, the authority is trusted no more: kept connections are not reused', async () => {
  assert.equal((await root.del(`/api/trusted-authorities/${added.id}`)).status, 204);
  refused(await data('/secure/again'), 502, 'upstream.untrusted');
  assert.ok(!seen.includes('GET /secure/again'));
  refused(await root.del(`/api/trusted-authorities/${added.id}`), 404, 'not-found');
  refused(await root.get(`/api/trusted-authorities/${added.id}`), 404, 'not-found');
  assert.deepEqual(await authorities(), []);

  await t.gw.ctx.audit.call('audit.settle', null);
  const trail = await root.get('/api/audit?targetKind=trusted-authority');
  assert.deepEqual(trail.json.events.map((e: { action: string }) => e.action), ['trusted-authority.delete', 'trusted-authority.create']);
  // The lines belong to the infrastructure's half: infra-admin reads them too.
  const read = await infra.get('/api/audit?targetKind=trusted-authority');
  assert.equal(read.status, 200, read.text);
  assert.equal(read.json.events.length, 2);
});

test('malformed requests are refused in words, never with a 500', async () => {
  const control = t.url('control');
  const bodies = [
    '', '{', 'null', '[]', '"x"', '{"name":{},"pem":[]}', '{"__proto__":{"pem":"x"},"name":"a"}', '{"constructor":"x"}',
    '{"name":"a","pem":"-----BEGIN CERTIFICATE-----"}', '{"name":"a","pem":"-----BEGIN CERTIFICATE-----\\n-----END CERTIFICATE-----"}',
    '{"name":"a","pem":"-----BEGIN CERTIFICATE-----\\n!!!!\\n-----END CERTIFICATE-----"}', '{"name":"a","pem":"-----BEGIN  PRIVATE KEY-----"}',
    JSON.stringify({ name: 'a', pem: ca.cert.repeat(2000).slice(0, 900_000) }), JSON.stringify({ name: 'a', pem: 'A'.repeat(900_000) }),
  ];
  for (const raw of bodies) {
    const a = await call(`${control}/api/trusted-authorities`, { method: 'POST', raw, headers: { ...root.headers, 'content-type': 'application/json' } });
    assert.ok((a.status >= 400 && a.status < 500) || a.status === 201, `${raw.slice(0, 60)}: ${a.status} ${a.text}`);
    if (a.status === 201) assert.equal((await root.del(`/api/trusted-authorities/${a.json.id}`)).status, 204);
  }
  for (const path of ['/api/trusted-authorities/%00', '/api/trusted-authorities/constructor', '/api/trusted-authorities/__proto__']) {
    for (const method of ['GET', 'DELETE']) {
      const a = await call(`${control}${path}`, { method, headers: root.headers });
      assert.ok(a.status === 400 || a.status === 404, `${method} ${path}: ${a.status} ${a.text}`);
    }
  }
});

test('the OpenAPI document describes the trusted authorities', async () => {
  const doc = (await call(`${t.url('control')}/api/openapi.json`)).json;
  assert.ok(doc.paths['/api/trusted-authorities'].post);
  assert.ok(doc.paths['/api/trusted-authorities'].get);
  assert.ok(doc.paths['/api/trusted-authorities/{id}'].get);
  assert.ok(doc.paths['/api/trusted-authorities/{id}'].delete);
});
