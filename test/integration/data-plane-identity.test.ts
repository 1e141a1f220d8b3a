/**
 * The caller's identity as the upstream receives it, through real sockets: plain headers,
 * Remote-User, or an ES256 JWT verified here against the gateway's published JWKS. Copies of
 * these headers sent by a caller never reach the upstream, in any mode, with or without a caller.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicKey, verify, type JsonWebKey } from 'node:crypto';
import { startTestGateway, ROOT_PASSWORD, type TestGateway } from '../helpers/gateway.ts';
import { call, signIn, type Answer } from '../helpers/http.ts';
import { rawRequest, startUpstream, type Received, type Upstream } from '../helpers/upstream.ts';
import { adminWith, personWithToken, putOk } from '../helpers/admin.ts';

let t: TestGateway;
let c: string;
let d: string;
let admin: Record<string, string>;
let up: Upstream;
const tokens: Record<string, string> = {};
const accountIds: Record<string, string> = {};

const IDENTITY = ['x-gateway-user', 'x-gateway-roles', 'x-gateway-organisation', 'remote-user', 'x-gateway-identity'] as const;
const FORGED: Record<string, string> = {
  'x-gateway-user': 'mallory',
  'x-gateway-roles': 'admin,root',
  'x-gateway-organisation': 'evil-corp',
  'remote-user': 'mallory',
  'x-gateway-identity': 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJtYWxsb3J5In0.',
};
const MODES = ['headers', 'remote-user', 'jwt'] as const;

function put(path: string, body: unknown): Promise<Answer> {
  return putOk(adminWith(c, admin), path, body);
}

async function account(name: string, roles: string[], organisation?: string): Promise<void> {
  const made = await personWithToken(adminWith(c, admin), name, roles, organisation);
  accountIds[name] = made.id;
  tokens[name] = made.token;
}

/** Sends a request as `who` (or nobody) with extra headers; returns what the upstream received. */
async function seen(path: string, who: string | undefined, headers: Record<string, string> = {}): Promise<Received> {
  const before = up.requests.length;
  const a = await call(`${d}${path}`, { headers: { ...headers, ...(who ? { authorization: `Bearer ${tokens[who]}` } : {}) } });
  assert.equal(a.status, 200, `${path} as ${who ?? 'nobody'}: ${a.status} ${a.text}`);
  assert.equal(up.requests.length, before + 1);
  return up.last();
}

function identityOf(r: Received): Record<string, string | string[] | undefined> {
  return Object.fromEntries(IDENTITY.map((n) => [n, r.headers[n]]));
}

interface Jwt {
  header: { alg: string; typ?: string; kid: string };
  claims: { iss: string; sub: string; roles: string[]; org?: string; iat: number; exp: number; [k: string]: unknown };
}

/** Verifies an ES256 compact JWT against the data plane's JWKS, as an upstream would. */
async function verifyIdentity(token: string): Promise<Jwt> {
  const parts = token.split('.');
  assert.equal(parts.length, 3, `a compact JWT: ${token}`);
  const [h, p, s] = parts as [string, string, string];
  const header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8')) as Jwt['header'];
  assert.equal(header.alg, 'ES256');
  const jwks = await call(`${d}/.well-known/jwks.json`);
  assert.equal(jwks.status, 200, jwks.text);
  const keys = jwks.json.keys as Array<JsonWebKey & { kid: string; alg?: string; use?: string }>;
  assert.ok(Array.isArray(keys) && keys.length > 0, jwks.text);
  const jwk = keys.find((k) => k.kid === header.kid);
  assert.ok(jwk, `the JWKS publishes the key ${header.kid}`);
  assert.equal(jwk.kty, 'EC');
  assert.equal(jwk.crv, 'P-256');
  assert.equal(jwk.d, undefined, 'no private part is published');
  const key = createPublicKey({ key: jwk, format: 'jwk' });
  const ok = verify('sha256', Buffer.from(`${h}.${p}`), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(s, 'base64url'));
  assert.ok(ok, 'the signature verifies against the published key');
  return { header, claims: JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as Jwt['claims'] };
}

before(async () => {
  t = await startTestGateway();
  c = t.url('control');
  d = t.url('data');
  admin = { cookie: await signIn(c, 'root', ROOT_PASSWORD), origin: c };
  up = await startUpstream();
  await put('/api/roles/reader', {});
  await put('/api/roles/staff', { implies: ['reader'] });
  await put('/api/roles/admin', { implies: ['staff'] });
  await put('/api/roles/auditor', {});
  await put('/api/organisations/acme', { name: 'Acme' });
  for (const mode of MODES) {
    await put(`/api/routes/p-${mode}`, { upstream: up.origin, paths: [`/p-${mode}`], rule: { roles: ['reader'] }, identity: mode });
    await put(`/api/routes/o-${mode}`, { upstream: up.origin, paths: [`/o-${mode}`], rule: null, identity: mode });
  }
  await account('alice', ['admin', 'auditor'], 'acme');
  await account('bob', ['staff']);
});

after(async () => {
  await t?.close();
  await up?.close();
});

test('headers mode: X-Gateway-User, X-Gateway-Roles (hierarchy expanded), X-Gateway-Organisation', async () => {
  const alice = await seen('/p-headers/x', 'alice');
  assert.equal(alice.headers['x-gateway-user'], 'alice');
  const roles = String(alice.headers['x-gateway-roles']).split(',').map((r) => r.trim());
  assert.deepEqual([...roles].sort(), ['admin', 'auditor', 'reader', 'staff'], `roles: ${alice.headers['x-gateway-roles']}`);
  assert.equal(alice.headers['x-gateway-organisation'], 'acme');
  assert.equal(alice.headers['remote-user'], undefined);
  assert.equal(alice.headers['x-gateway-identity'], undefined);
  const bob = await seen('/p-headers/x', 'bob');
  assert.equal(bob.headers['x-gateway-user'], 'bob');
  assert.deepEqual(String(bob.headers['x-gateway-roles']).split(',').map((r) => r.trim()).sort(), ['reader', 'staff']);
  assert.equal(bob.headers['x-gateway-organisation'], undefined, 'no organisation: no header');
});

test('remote-user mode: Remote-User only', async () => {
  const alice = await seen('/p-remote-user/x', 'alice');
  assert.equal(alice.headers['remote-user'], 'alice');
  for (const name of ['x-gateway-user', 'x-gateway-roles', 'x-gateway-organisation', 'x-gateway-identity']) {
    assert.equal(alice.headers[name], undefined, name);
  }
});

test('jwt mode: X-Gateway-Identity is an ES256 JWT that verifies against the JWKS, living 60 s', async () => {
  const before = Date.now();
  const alice = await seen('/p-jwt/x', 'alice');
  for (const name of ['x-gateway-user', 'x-gateway-roles', 'x-gateway-organisation', 'remote-user']) {
    assert.equal(alice.headers[name], undefined, name);
  }
  const token = alice.headers['x-gateway-identity'];
  assert.equal(typeof token, 'string');
  const { header, claims } = await verifyIdentity(token as string);
  assert.equal(header.typ, 'JWT');
  assert.equal(claims.sub, 'alice');
  assert.equal(claims.aud, 'p-jwt', 'the route the token was made for');
  const other = await verifyIdentity((await seen('/o-jwt/x', 'alice')).headers['x-gateway-identity'] as string);
  assert.equal(other.claims.aud, 'o-jwt', 'another route\'s service gets a token of its own');
  assert.deepEqual([...claims.roles].sort(), ['admin', 'auditor', 'reader', 'staff']);
  assert.equal(claims.org, 'acme');
  assert.equal(claims.exp - claims.iat, 60);
  assert.match(claims.iss, /^https:\/\/[^/:]+$/, `iss is https://<name>: ${claims.iss}`);
  assert.equal(claims.iss, 'https://127.0.0.1', 'without declared public names, the issuer is the name the caller used');
  const nowS = Math.floor(Date.now() / 1000);
  assert.ok(claims.iat <= nowS + 1 && claims.iat >= Math.floor(before / 1000) - 31, `iat ${claims.iat} around now ${nowS}`);
  assert.ok(claims.exp > nowS + 25, `exp ${claims.exp} is comfortably ahead of now ${nowS}`);
  const bob = await seen('/p-jwt/x', 'bob');
  const bobJwt = await verifyIdentity(bob.headers['x-gateway-identity'] as string);
  assert.equal(bobJwt.claims.sub, 'bob');
  assert.equal(bobJwt.claims.org, undefined, 'no organisation: no org claim');
  assert.deepEqual([...bobJwt.claims.roles].sort(), ['reader', 'staff']);
});

test('jwt mode: the issuer follows the Host the caller used, without its port', async () => {
  const r = await seen('/p-jwt/x', 'bob', { host: 'API.Example.Test:8443' });
  const { claims } = await verifyIdentity(r.headers['x-gateway-identity'] as string);
  assert.equal(claims.iss, 'https://api.example.test');
});

test('the identity forwarded follows a change of roles at once', async () => {
  const first = await verifyIdentity((await seen('/p-jwt/x', 'bob')).headers['x-gateway-identity'] as string);
  assert.ok(!first.claims.roles.includes('auditor'));
  const patched = await call(`${c}/api/accounts/${accountIds.bob}`, { method: 'PATCH', headers: admin, body: { roles: ['staff', 'auditor'] } });
  assert.equal(patched.status, 200, patched.text);
  const second = await verifyIdentity((await seen('/p-jwt/x', 'bob')).headers['x-gateway-identity'] as string);
  assert.deepEqual([...second.claims.roles].sort(), ['auditor', 'reader', 'staff'], 'a cached token with the old roles is not reused');
  const headers = await seen('/p-headers/x', 'bob');
  assert.deepEqual(String(headers.headers['x-gateway-roles']).split(',').sort(), ['auditor', 'reader', 'staff']);
  const back = await call(`${c}/api/accounts/${accountIds.bob}`, { method: 'PATCH', headers: admin, body: { roles: ['staff'] } });
  assert.equal(back.status, 200, back.text);
});

test('the JWKS is public and holds public keys only', async () => {
  const a = await call(`${d}/.well-known/jwks.json`);
  assert.equal(a.status, 200);
  assert.match(String(a.headers['content-type']), /json/);
  for (const k of a.json.keys as Array<Record<string, unknown>>) {
    assert.equal(k.kty, 'EC');
    assert.equal(k.d, undefined);
    assert.equal(typeof k.kid, 'string');
  }
  const head = await call(`${d}/.well-known/jwks.json`, { method: 'HEAD' });
  assert.equal(head.status, 200);
});

test('incoming identity headers are stripped in every mode, for a caller', async () => {
  for (const mode of MODES) {
    const r = await seen(`/p-${mode}/x`, 'bob', FORGED);
    const got = identityOf(r);
    assert.notEqual(got['x-gateway-user'], 'mallory', mode);
    assert.notEqual(got['remote-user'], 'mallory', mode);
    assert.notEqual(got['x-gateway-roles'], FORGED['x-gateway-roles'], mode);
    assert.equal(got['x-gateway-organisation'], undefined, `${mode}: bob has no organisation, the forged one is gone`);
    assert.notEqual(got['x-gateway-identity'], FORGED['x-gateway-identity'], mode);
    assert.doesNotMatch(JSON.stringify(r.rawHeaders), /mallory|evil-corp|admin,root/, `${mode}: ${JSON.stringify(r.rawHeaders)}`);
    if (mode === 'headers') assert.equal(got['x-gateway-user'], 'bob');
    if (mode === 'remote-user') {
      assert.equal(got['remote-user'], 'bob');
      assert.equal(got['x-gateway-user'], undefined);
    }
    if (mode === 'jwt') {
      assert.equal(got['x-gateway-user'], undefined);
      assert.equal((await verifyIdentity(got['x-gateway-identity'] as string)).claims.sub, 'bob');
    }
  }
});

test('incoming identity headers are stripped on open routes with no caller', async () => {
  for (const mode of MODES) {
    const r = await seen(`/o-${mode}/x`, undefined, FORGED);
    assert.deepEqual(identityOf(r), Object.fromEntries(IDENTITY.map((n) => [n, undefined])), `${mode}: no identity at all`);
    assert.doesNotMatch(JSON.stringify(r.rawHeaders), /mallory|evil-corp/, mode);
  }
});

test('an open route with a caller forwards that caller\'s identity, never a forged one', async () => {
  const r = await seen('/o-headers/x', 'alice', FORGED);
  assert.equal(r.headers['x-gateway-user'], 'alice');
  assert.equal(r.headers['x-gateway-organisation'], 'acme');
  assert.equal(r.headers['remote-user'], undefined);
});

test('identity headers are stripped whatever their case, repetition, or Connection listing', async () => {
  const port = Number(new URL(d).port);
  for (const mode of MODES) {
    const r = await rawRequest(port, `GET /o-${mode}/raw HTTP/1.1\r\nHost: x\r\n`
      + 'X-GATEWAY-USER: mallory\r\nx-gateway-user: mallory2\r\nRemote-User: mallory\r\nREMOTE-USER: mallory3\r\n'
      + 'X-Gateway-Roles: admin,root\r\nX-Gateway-Organisation: evil-corp\r\nX-Gateway-Identity: forged\r\n'
      + 'Connection: close\r\n\r\n');
    assert.equal(r.status, 200, r.head);
    const got = up.last();
    assert.equal(got.url, `/o-${mode}/raw`);
    assert.deepEqual(identityOf(got), Object.fromEntries(IDENTITY.map((n) => [n, undefined])), mode);
    assert.doesNotMatch(JSON.stringify(got.rawHeaders), /mallory|evil-corp|forged/, mode);
  }
  // A caller naming the identity headers in Connection does not take away the gateway's own.
  const listed = await rawRequest(port, `GET /p-headers/raw HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${tokens.bob}\r\n`
    + 'X-Gateway-User: mallory\r\nConnection: close, X-Gateway-User, X-Gateway-Roles\r\n\r\n');
  assert.equal(listed.status, 200, listed.head);
  assert.equal(up.last().headers['x-gateway-user'], 'bob');
  assert.deepEqual(String(up.last().headers['x-gateway-roles']).split(',').sort(), ['reader', 'staff']);
});
