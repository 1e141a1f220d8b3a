import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createPrivateKey, createPublicKey, verify } from 'node:crypto';
import type { Identity } from '../../src/core/model.ts';
import { IDENTITY_HEADERS, IdentitySigner, addIdentityHeaders, generateSigningKey } from '../../src/pipeline/identity.ts';

const ISS = 'https://gateway.example';
const AUD = 'orders';
const T0 = Date.UTC(2025, 5, 1, 12, 0, 0);
const alice: Identity = { user: 'alice', roles: ['editor', 'reader'], organisation: 'acme' };
const bob: Identity = { user: 'bob', roles: [], organisation: null };

/** RFC 7638 by the book: the required members, keys sorted, no whitespace, SHA-256, base64url. */
function thumbprintOf(members: Record<string, string>): string {
  const sorted = Object.fromEntries(Object.entries(members).sort(([a], [b]) => (a < b ? -1 : 1)));
  return createHash('sha256').update(JSON.stringify(sorted)).digest('base64url');
}

const decode = (part: string): Record<string, unknown> => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));

function verifyToken(token: string, jwks: { readonly keys: readonly Record<string, string>[] }): { header: Record<string, unknown>; claims: Record<string, unknown> } {
  const [h, p, s, ...rest] = token.split('.');
  assert.equal(rest.length, 0);
  const header = decode(h!);
  const jwk = jwks.keys.find((k) => k.kid === header.kid);
  assert.ok(jwk, `kid ${String(header.kid)} is published`);
  const key = createPublicKey({ key: { kty: jwk.kty!, crv: jwk.crv!, x: jwk.x!, y: jwk.y! }, format: 'jwk' });
  const sig = Buffer.from(s!, 'base64url');
  assert.equal(sig.length, 64, 'ES256 signatures are r||s, 64 bytes');
  assert.ok(verify('sha256', Buffer.from(`${h}.${p}`), { key, dsaEncoding: 'ieee-p1363' }, sig), 'signature verifies');
  return { header, claims: decode(p!) };
}

test('the thumbprint helper reproduces the RFC 7638 example', () => {
  const n = '0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw';
  assert.equal(thumbprintOf({ n, kty: 'RSA', e: 'AQAB' }), 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs');
});

test('generateSigningKey: a P-256 key whose kid is its RFC 7638 thumbprint', () => {
  const key = generateSigningKey();
  const priv = createPrivateKey(key.privateKeyPem);
  assert.equal(priv.asymmetricKeyType, 'ec');
  assert.equal(priv.asymmetricKeyDetails?.namedCurve, 'prime256v1');
  const jwk = createPublicKey(priv).export({ format: 'jwk' });
  assert.equal(key.kid, thumbprintOf({ kty: 'EC', crv: 'P-256', x: jwk.x!, y: jwk.y! }));
  assert.match(key.kid, /^[A-Za-z0-9_-]{43}$/);
  assert.notEqual(generateSigningKey().kid, key.kid);
});

test('jwks publishes every key, public parts only, computed once', () => {
  const keys = [generateSigningKey(), generateSigningKey()];
  const signer = new IdentitySigner(keys);
  const jwks = signer.jwks();
  assert.equal(signer.jwks(), jwks);
  assert.deepEqual(jwks.keys.map((k) => k.kid), keys.map((k) => k.kid));
  for (const k of jwks.keys) {
    assert.deepEqual(Object.keys(k).sort(), ['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
    assert.equal(k.kty, 'EC');
    assert.equal(k.crv, 'P-256');
    assert.equal(k.alg, 'ES256');
    assert.equal(k.use, 'sig');
    assert.equal(thumbprintOf({ kty: k.kty!, crv: k.crv!, x: k.x!, y: k.y! }), k.kid);
  }
  assert.ok(!JSON.stringify(jwks).includes('"d"'), 'no private part');
  assert.throws(() => new IdentitySigner([]));
});

test('sign: an ES256 JWT signed by the first key, verifiable with the JWKS, with the expected claims', () => {
  const keys = [generateSigningKey(), generateSigningKey()];
  const signer = new IdentitySigner(keys);
  const token = signer.sign(alice, ISS, AUD, T0 + 999);
  const { header, claims } = verifyToken(token, signer.jwks());
  assert.deepEqual(header, { alg: 'ES256', typ: 'JWT', kid: keys[0]!.kid });
  assert.deepEqual(claims, { iss: ISS, aud: AUD, sub: 'alice', roles: ['editor', 'reader'], org: 'acme', iat: T0 / 1000, exp: T0 / 1000 + 60 });
  const noOrg = verifyToken(signer.sign(bob, ISS, AUD, T0), signer.jwks()).claims;
  assert.deepEqual(noOrg, { iss: ISS, aud: AUD, sub: 'bob', roles: [], iat: T0 / 1000, exp: T0 / 1000 + 60 });
  assert.ok(!('org' in noOrg));
  // After rotation the retired key is still published, so its tokens still verify.
  const rotated = new IdentitySigner([generateSigningKey(), keys[0]!]);
  verifyToken(token, rotated.jwks());
});

test('each route gets a token of its own audience: one made for a route is never handed to another', () => {
  const signer = new IdentitySigner([generateSigningKey()]);
  const orders = signer.sign(alice, ISS, 'orders', T0);
  const billing = signer.sign(alice, ISS, 'billing', T0 + 1);
  assert.notEqual(billing, orders);
  assert.equal(verifyToken(billing, signer.jwks()).claims.aud, 'billing');
  assert.equal(signer.sign(alice, ISS, 'orders', T0 + 2), orders, 'each still reused for its own route');
  assert.equal(signer.sign(alice, ISS, 'billing', T0 + 2), billing);
});

test('sign reuses a token while 30 s of validity remain, then signs anew', () => {
  const signer = new IdentitySigner([generateSigningKey()]);
  const first = signer.sign(alice, ISS, AUD, T0);
  assert.equal(signer.sign(alice, ISS, AUD, T0 + 1), first);
  assert.equal(signer.sign({ ...alice, roles: [...alice.roles] }, ISS, AUD, T0 + 29_999), first, 'same content, another object');
  assert.equal(signer.sign(alice, ISS, AUD, T0 + 30_000), first, 'exactly 30 s left is enough');
  const second = signer.sign(alice, ISS, AUD, T0 + 30_001);
  assert.notEqual(second, first);
  assert.equal(verifyToken(second, signer.jwks()).claims.iat, T0 / 1000 + 30);
  assert.equal(signer.sign(alice, ISS, AUD, T0 + 45_000), second);
});

test('a user holding several role sets keeps a token for each, up to a bound', () => {
  const signer = new IdentitySigner([generateSigningKey()]);
  const tokens = Array.from({ length: 16 }, (_, i) => signer.sign({ ...alice, roles: [`r${i}`] }, ISS, AUD, T0));
  for (let i = 0; i < 16; i++) assert.equal(signer.sign({ ...alice, roles: [`r${i}`] }, ISS, AUD, T0 + 1_000), tokens[i]);
  signer.sign({ ...alice, roles: ['r16'] }, ISS, AUD, T0);
  assert.notEqual(signer.sign({ ...alice, roles: ['r0'] }, ISS, AUD, T0 + 1_000), tokens[0], 'the oldest was let go');
});

test('a caller mutating its roles array later does not alter the cached token', () => {
  const signer = new IdentitySigner([generateSigningKey()]);
  const roles = ['a'];
  const t = signer.sign({ user: 'm', roles, organisation: null }, ISS, AUD, T0);
  roles.push('b');
  const u = signer.sign({ user: 'm', roles, organisation: null }, ISS, AUD, T0);
  assert.notEqual(u, t);
  assert.deepEqual(verifyToken(u, signer.jwks()).claims.roles, ['a', 'b']);
});

test('the cache tells identities, issuers, roles and organisations apart', () => {
  const signer = new IdentitySigner([generateSigningKey()]);
  const base = signer.sign(alice, ISS, AUD, T0);
  const variants = [
    signer.sign(alice, 'https://other.example', AUD, T0),
    signer.sign({ ...alice, user: 'alice2' }, ISS, AUD, T0),
    signer.sign({ ...alice, roles: ['editor'] }, ISS, AUD, T0),
    signer.sign({ ...alice, roles: ['editor,reader'] }, ISS, AUD, T0),
    signer.sign({ ...alice, organisation: null }, ISS, AUD, T0),
    signer.sign({ ...alice, organisation: 'acme2' }, ISS, AUD, T0),
  ];
  for (const v of variants) assert.notEqual(v, base);
  assert.equal(new Set(variants).size, variants.length);
  assert.deepEqual(verifyToken(variants[3]!, signer.jwks()).claims.roles, ['editor,reader']);
});

test('a clock stepped backwards never gets a token issued in its future', () => {
  const signer = new IdentitySigner([generateSigningKey()]);
  const later = signer.sign(alice, ISS, AUD, T0 + 10_000);
  const earlier = signer.sign(alice, ISS, AUD, T0);
  assert.notEqual(earlier, later);
  assert.equal(verifyToken(earlier, signer.jwks()).claims.iat, T0 / 1000);
});

test('many identities: the cache stays usable past its limit', () => {
  const signer = new IdentitySigner([generateSigningKey()]);
  for (let i = 0; i < 10_000; i++) signer.sign({ user: `u${i}`, roles: [], organisation: null }, ISS, AUD, T0);
  // Alice arrives exactly when the cache is full: the sweep finds nothing stale and clears it.
  const t = signer.sign(alice, ISS, AUD, T0);
  assert.equal(signer.sign(alice, ISS, AUD, T0 + 5_000), t, 'the token signed during the sweep is kept');
  // Later, with Alice's token stale, the sweep drops it alone and the fresh ones stay.
  for (let i = 0; i < 9_999; i++) signer.sign({ user: `v${i}`, roles: [], organisation: null }, ISS, AUD, T0 + 40_000);
  const fresh = signer.sign({ user: 'v1', roles: [], organisation: null }, ISS, AUD, T0 + 40_000);
  const carol: Identity = { user: 'carol', roles: [], organisation: null };
  const c = signer.sign(carol, ISS, AUD, T0 + 40_000);
  assert.equal(signer.sign(carol, ISS, AUD, T0 + 41_000), c);
  assert.equal(signer.sign({ user: 'v1', roles: [], organisation: null }, ISS, AUD, T0 + 41_000), fresh);
});

/** The headers a mode adds to an empty set. */
function headersFor(...args: Parameters<typeof addIdentityHeaders> extends [unknown, ...infer Rest] ? Rest : never): Record<string, string> {
  const out: Record<string, string> = {};
  addIdentityHeaders(out, ...args);
  return out;
}

test('identity headers per mode', () => {
  const signer = new IdentitySigner([generateSigningKey()]);
  assert.deepEqual(headersFor('headers', alice, signer, ISS, AUD, T0), {
    'x-gateway-user': 'alice', 'x-gateway-roles': 'editor,reader', 'x-gateway-organisation': 'acme',
  });
  assert.deepEqual(headersFor('headers', bob, signer, ISS, AUD, T0), { 'x-gateway-user': 'bob', 'x-gateway-roles': '' });
  assert.deepEqual(headersFor('remote-user', alice, signer, ISS, AUD, T0), { 'remote-user': 'alice' });
  const jwt = headersFor('jwt', alice, signer, ISS, AUD, T0);
  assert.deepEqual(Object.keys(jwt), ['x-gateway-identity']);
  assert.equal(jwt['x-gateway-identity'], signer.sign(alice, ISS, AUD, T0));
  for (const mode of ['headers', 'remote-user', 'jwt'] as const) {
    for (const name of Object.keys(headersFor(mode, alice, signer, ISS, AUD, T0))) assert.ok(IDENTITY_HEADERS.has(name), name);
  }
  // The role list's value follows the identity's roles, joined once per list.
  assert.equal(headersFor('headers', { ...alice, roles: ['a', 'b'] }, signer, ISS, AUD, T0)['x-gateway-roles'], 'a,b');
  assert.deepEqual([...IDENTITY_HEADERS].sort(), ['remote-user', 'x-gateway-identity', 'x-gateway-organisation', 'x-gateway-roles', 'x-gateway-user']);
});
