/**
 * ACME orders end to end (spec 1.2 rules 19 and 24, 2.5 "ACME authority"; CONTRACT.md "TLS"): a
 * licensed gateway on the test clock asks Pebble for the certificates of the orders placed on
 * the application plane. Pebble validates HTTP-01 on the gateway's data-plane plain port and
 * TLS-ALPN-01 on its HTTPS port (fixed, so Pebble can be told it), with its names resolved to
 * 127.0.0.1, and requires External Account Binding. Issuance is real network work, so a record is
 * polled until its state moves; the renewal check is moved by the test clock.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type PeerCertificate } from 'node:tls';
import { createServer, type AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { signInAdmin, type Admin } from '../helpers/admin.ts';
import { startPebble, type Pebble } from '../helpers/pebble.ts';
import { call } from '../helpers/http.ts';
import { startUpstream } from '../helpers/upstream.ts';
import { TEST_DATABASE } from '../helpers/db.ts';
import pg from 'pg';

const EAB = { kid: 'kid-1', hmacKey: 'zWNDZM6eQGHWpSRTPal5eIUYFTu7EajVIoguysqZ9wG44nMEtx3MUAsUDkMTQ12W' };
const WRONG_HMAC = Buffer.from('not the key of kid-1, not at all').toString('base64url');
const APP = 'shop.acme.test';
const ALPN = 'alpn.acme.test';
const WRONG = 'wrong.acme.test';
const CLUSTER = 'cluster.acme.test';
const NAMES = [APP, ALPN, WRONG, CLUSTER];

let t: TestGateway;
let admin: Admin;
let pebble: Pebble;
let tlsPort: number;
let orderId: string;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** The certificate the HTTPS door presents for `servername`, verified against `ca`. */
function presented(servername: string, ca: string, port = tlsPort): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    const s = connect({ port, host: '127.0.0.1', servername, ca }, () => {
      resolve(s.getPeerCertificate());
      s.end();
    });
    s.on('error', reject);
  });
}

/** The order's record once its state is no longer `state` (issuance is real network work: ~20 s at most). */
async function settled(id: string, moved: (r: Record<string, any>) => boolean): Promise<Record<string, any>> {
  const end = Date.now() + 20_000;
  for (;;) {
    const a = await admin.get(`/api/certificates/${id}`);
    assert.equal(a.status, 200, a.text);
    if (moved(a.json)) return a.json;
    if (Date.now() > end) assert.fail(`the order did not move in 20 s: ${a.text}\n${pebble.output().slice(-3000)}`);
    await delay(200);
  }
}

async function authority(body: Record<string, unknown>) {
  return admin.post('/api/acme/authorities', { directory: pebble.directory, rootCa: pebble.rootCa, termsAccepted: true, ...body });
}

async function order(authorityRef: string, names: string[]) {
  const a = await admin.post('/api/certificates', { source: 'acme', authority: authorityRef, names });
  assert.equal(a.status, 201, a.text);
  return a.json;
}

before(async () => {
  tlsPort = await freePort();
  t = await startTestGateway({ GATEWAY_EDITION: 'licensed', GATEWAY_CLOCK: 'manual', GATEWAY_TLS_ADDR: `127.0.0.1:${tlsPort}` });
  admin = await signInAdmin(t.url('control'));
  const httpPort = t.gw.doors.find((d) => d.plane === 'data' && d.protocol === 'http')!.port;
  pebble = await startPebble({ httpPort, tlsPort, names: NAMES, eab: { [EAB.kid]: EAB.hmacKey } });
});

after(async () => {
  await t?.close();
  await pebble?.stop();
});

test('an authority is written with its EAB; no answer and no audit line carries the HMAC key', async () => {
  const created = await authority({ name: 'pebble', email: 'ops@example.test', eab: EAB });
  assert.equal(created.status, 201, created.text);
  assert.deepEqual(created.json.eab, { kid: EAB.kid, hmacKey: 'sealed' });
  assert.equal(created.json.challenge, 'http-01');
  assert.equal(created.json.armed, false);
  assert.equal(created.json.accountUrl, null);

  assert.equal((await admin.put('/api/vault/ACME_HMAC', { value: EAB.hmacKey })).status, 201);
  const referenced = await authority({ name: 'pebble-alpn', eab: { kid: EAB.kid, hmacKey: '$ACME_HMAC' }, challenge: 'tls-alpn-01' });
  assert.equal(referenced.status, 201, referenced.text);
  assert.deepEqual(referenced.json.eab, { kid: EAB.kid, hmacKey: '$ACME_HMAC' });

  // The vault is app-admin's: an infra-admin may not sign with one of its values, nor learn which it holds.
  assert.equal((await admin.post('/api/accounts', { name: 'infra', password: 'infra-password-1', capabilities: ['infra-admin'] })).status, 201);
  const infra = await signInAdmin(t.url('control'), 'infra', 'infra-password-1');
  for (const hmacKey of ['$ACME_HMAC', '$NO_SUCH_VALUE']) {
    const refused = await infra.post('/api/acme/authorities', { name: `infra-${hmacKey.slice(1)}`, directory: pebble.directory, rootCa: pebble.rootCa, termsAccepted: true, eab: { kid: EAB.kid, hmacKey } });
    assert.deepEqual([refused.status, refused.json.code, refused.json.field], [403, 'capability', 'eab.hmacKey'], refused.text);
  }
  const moved = await infra.put(`/api/acme/authorities/${referenced.json.id}`, { name: 'pebble-alpn', directory: 'https://elsewhere.example/dir', termsAccepted: true, eab: { kid: EAB.kid } });
  assert.deepEqual([moved.status, moved.json.code], [403, 'capability'], 'keeping the reference for another directory is using it too');
  const literal = await infra.post('/api/acme/authorities', { name: 'infra-literal', directory: pebble.directory, rootCa: pebble.rootCa, termsAccepted: true, eab: EAB });
  assert.equal(literal.status, 201, 'the HMAC key itself is the infra-admin\'s to give');
  assert.equal((await admin.del(`/api/acme/authorities/${literal.json.id}`)).status, 204);

  const missing = await authority({ name: 'nowhere', eab: { kid: EAB.kid, hmacKey: '$NO_SUCH_VALUE' } });
  assert.equal(missing.status, 400, missing.text);
  assert.equal(missing.json.field, 'eab.hmacKey');
  const taken = await authority({ name: 'pebble' });
  assert.equal(taken.status, 409, taken.text);
  assert.equal(taken.json.code, 'acme.authority-taken');
  const plain = await admin.post('/api/acme/authorities', { name: 'plain', directory: 'http://127.0.0.1/dir', termsAccepted: true });
  assert.equal(plain.status, 400, plain.text);
  assert.equal(plain.json.field, 'directory');

  const list = await admin.get('/api/acme/authorities');
  assert.equal(list.status, 200);
  assert.deepEqual(list.json.authorities.map((a: { name: string }) => a.name), ['pebble', 'pebble-alpn']);
  const trail = await admin.get('/api/audit?targetKind=settings');
  assert.ok(trail.json.events.some((e: { action: string }) => e.action === 'acme.authority.create'), trail.text);
  for (const text of [created.text, list.text, trail.text, (await admin.get(`/api/acme/authorities/${created.json.id}`)).text]) {
    assert.ok(!text.includes(EAB.hmacKey), 'the HMAC key never leaves the gateway');
  }
});

test('an order placed on the application is issued by HTTP-01 and presented by the HTTPS door', async () => {
  const created = await order('pebble', [APP]);
  orderId = created.id;
  assert.equal(created.name, 'Ask pebble');
  assert.equal(created.source, 'acme');
  assert.equal(created.state, 'requesting');

  const internal = await admin.put(`/api/certificates/${orderId}/placement`, { planes: ['internal'] });
  assert.equal(internal.status, 400, internal.text);
  assert.match(internal.json.detail, /ACME is not offered on the internal plane/);

  const placed = await admin.put(`/api/certificates/${orderId}/placement`, { planes: ['app'] });
  assert.equal(placed.status, 200, placed.text);
  assert.equal(placed.json.state, 'requesting');
  const issued = await settled(orderId, (r) => r.state !== 'requesting');
  assert.equal(issued.state, 'active', JSON.stringify(issued));
  assert.deepEqual(issued.names, [APP]);
  assert.ok(issued.notAfter > issued.notBefore);
  assert.ok(t.logs.some((l) => l.msg === 'acme challenge valid' && l.attrs.name === APP && l.attrs.challenge === 'http-01'));

  // The door presents it, and it chains to Pebble's issuing root (verified by the handshake itself).
  const root = await pebble.issuerRoots();
  const peer = await presented(APP, root);
  assert.equal(peer.fingerprint256, issued.fingerprint);
  assert.equal(peer.subjectaltname, `DNS:${APP}`);

  // Nothing waits now: a token the board does not hold goes on as any request. No route serves it
  // on the data plane, and the console has no such page: 404 on both plain doors.
  for (const plane of ['data', 'control'] as const) {
    const unknown = await call(`${t.url(plane)}/.well-known/acme-challenge/no-such-token`, { headers: { host: APP } });
    assert.equal(unknown.status, 404, unknown.text);
    assert.notEqual(unknown.text, '', 'a problem, not an empty answer');
  }
  // A service behind a route answering its own validations gets the tokens that are not the gateway's.
  const service = await startUpstream();
  try {
    assert.equal((await admin.put('/api/routes/own-acme', { upstream: service.origin, paths: ['/.well-known/acme-challenge'] })).status, 201);
    const passed = await call(`${t.url('data')}/.well-known/acme-challenge/the-service-token`, { headers: { host: APP } });
    assert.equal(passed.status, 200, passed.text);
    assert.equal(service.last().url, '/.well-known/acme-challenge/the-service-token');
    assert.equal((await admin.del('/api/routes/own-acme')).status, 204);
  } finally {
    await service.close();
  }

  const armed = (await admin.get('/api/acme/authorities')).json.authorities.find((a: { name: string }) => a.name === 'pebble');
  assert.equal(armed.armed, true);
  assert.match(armed.accountUrl, /^https:\/\/127\.0\.0\.1:\d+\//);
});

test('TLS-ALPN-01 through the application\'s HTTPS door, with the HMAC key from the vault', async () => {
  const created = await order('pebble-alpn', [ALPN]);
  assert.equal(created.name, 'Ask pebble-alpn');
  assert.equal((await admin.put(`/api/certificates/${created.id}/placement`, { planes: ['app'] })).status, 200);
  const issued = await settled(created.id, (r) => r.state !== 'requesting');
  assert.equal(issued.state, 'active', JSON.stringify(issued));
  assert.ok(t.logs.some((l) => l.msg === 'acme challenge valid' && l.attrs.name === ALPN && l.attrs.challenge === 'tls-alpn-01'),
    'validated through the door by TLS-ALPN-01');
  assert.equal((await presented(ALPN, await pebble.issuerRoots())).fingerprint256, issued.fingerprint);
  // An ordinary client still gets HTTP/1.1 from the same door.
  const alpn = await new Promise<string | false>((resolve, reject) => {
    const s = connect({ port: tlsPort, host: '127.0.0.1', servername: APP, rejectUnauthorized: false, ALPNProtocols: ['h2', 'http/1.1'] }, () => {
      resolve(s.alpnProtocol ?? false);
      s.end();
    });
    s.on('error', reject);
  });
  assert.equal(alpn, 'http/1.1');
  // An acme-tls/1 handshake for a name no validation waits on is cut before any certificate is presented.
  await assert.rejects(new Promise((resolve, reject) => {
    const s = connect({ port: tlsPort, host: '127.0.0.1', servername: APP, rejectUnauthorized: false, ALPNProtocols: ['acme-tls/1'] }, () => resolve(s.end()));
    s.on('error', reject);
  }), /no.application.protocol|alert|disconnected/i);
});

test('terms not accepted: the order is refused with the reason, nothing is asked', async () => {
  const a = await authority({ name: 'no-terms', termsAccepted: false, eab: EAB });
  assert.equal(a.status, 201, a.text);
  assert.equal(a.json.termsAccepted, false);
  const refused = await admin.post('/api/certificates', { source: 'acme', authority: 'no-terms', names: [APP] });
  assert.equal(refused.status, 409, refused.text);
  assert.equal(refused.json.code, 'acme.terms-not-accepted');
  assert.match(refused.json.detail, /terms of service of "no-terms" have not been accepted/);
  const unknown = await admin.post('/api/certificates', { source: 'acme', authority: 'no-such-authority', names: [APP] });
  assert.equal(unknown.status, 400, unknown.text);
  assert.equal(unknown.json.code, 'acme.authority-unknown');
  const wildcard = await admin.post('/api/certificates', { source: 'acme', authority: 'pebble', names: ['*.acme.test'] });
  assert.equal(wildcard.status, 400, wildcard.text);
  assert.match(wildcard.json.detail, /wildcard/);
});

test('a wrong EAB key: the order is refused with the authority\'s own sentence; an authority in use stays', async () => {
  const a = await authority({ name: 'wrong-eab', eab: { kid: EAB.kid, hmacKey: WRONG_HMAC } });
  assert.equal(a.status, 201, a.text);
  const created = await order('wrong-eab', [WRONG]);
  assert.equal((await admin.put(`/api/certificates/${created.id}/placement`, { planes: ['app'] })).status, 200);
  const refused = await settled(created.id, (r) => r.state !== 'requesting');
  assert.equal(refused.state, 'refused', JSON.stringify(refused));
  assert.match(refused.detail, /^The ACME authority refused: .*(binding|JWS|HMAC|verif)/i);
  assert.equal(refused.fingerprint, null);

  const inUse = await admin.del(`/api/acme/authorities/${a.json.id}`);
  assert.equal(inUse.status, 409, inUse.text);
  assert.equal(inUse.json.code, 'acme.authority-in-use');
  assert.equal((await admin.del(`/api/certificates/${created.id}`)).status, 204);
  assert.equal((await admin.del(`/api/acme/authorities/${a.json.id}`)).status, 204);
  assert.equal((await admin.get(`/api/acme/authorities/${a.json.id}`)).status, 404);
});

test('cluster: the order\'s lock keeps other nodes out; the certificate reaches every node through the change bus', {
  skip: TEST_DATABASE === 'postgres' ? false : 'several nodes share one PostgreSQL database; the SQLite file serves one node',
}, async () => {
  const created = await order('pebble', [CLUSTER]);
  // Another node holds the order's lock: this node skips the order and keeps it requesting.
  const other = new pg.Client({ connectionString: t.db.databaseUrl });
  await other.connect();
  let node: TestGateway | undefined;
  try {
    await other.query('select pg_advisory_lock(hashtext($1))', [`meerkat-acme:${created.id}`]);
    assert.equal((await admin.put(`/api/certificates/${created.id}/placement`, { planes: ['app'] })).status, 200);
    const skipped = Date.now() + 10_000;
    while (!t.logs.some((l) => l.msg === 'another node is asking for this certificate' && l.attrs.certificate === created.id)) {
      if (Date.now() > skipped) assert.fail('the order was not skipped while its lock was held');
      await delay(50);
    }
    assert.equal((await admin.get(`/api/certificates/${created.id}`)).json.state, 'requesting');
    // A second node starts while the lock is held: it finds the order and skips it too.
    node = await startTestGateway({ GATEWAY_EDITION: 'licensed', GATEWAY_CLOCK: 'manual', GATEWAY_NODE_NAME: 'node-b' }, t.db);
    await other.query('select pg_advisory_unlock(hashtext($1))', [`meerkat-acme:${created.id}`]);
    // The hourly check of this node asks again, now that the lock is free.
    await t.gw.ctx.advanceClock!(3600_000);
    const issued = await settled(created.id, (r) => r.state !== 'requesting');
    assert.equal(issued.state, 'active', JSON.stringify(issued));
    assert.ok(!node.logs.some((l) => l.msg === 'acme order asked' && l.attrs.certificate === created.id), 'the second node never asked');
    // The second node presents it, having read it from the shared store.
    const end = Date.now() + 10_000;
    let port: number | undefined;
    while ((port = node.gw.doors.find((d) => d.plane === 'data' && d.protocol === 'https')?.port) === undefined || !node.gw.ctx.certs.view.records.get(created.id)?.fingerprint) {
      if (Date.now() > end) assert.fail('the second node did not load the certificate');
      await delay(50);
    }
    assert.equal((await presented(CLUSTER, await pebble.issuerRoots(), port)).fingerprint256, issued.fingerprint);
  } finally {
    await other.end();
    await node?.gw.stop();
  }
});

test('a new directory drops the account: a fresh one at the next order; the stored HMAC key stays', async () => {
  const id = (await admin.get('/api/acme/authorities')).json.authorities.find((a: { name: string }) => a.name === 'no-terms').id;
  const moved = await admin.put(`/api/acme/authorities/${id}`, { name: 'no-terms', directory: `${pebble.directory}?moved`, termsAccepted: false, eab: { kid: EAB.kid, hmacKey: 'sealed' } });
  assert.equal(moved.status, 200, moved.text);
  assert.equal(moved.json.accountUrl, null);
  assert.deepEqual(moved.json.eab, { kid: EAB.kid, hmacKey: 'sealed' });
});

test('renewal: past two thirds of the lifetime, the hourly check asks again and the door presents the new one', async () => {
  const before = (await admin.get(`/api/certificates/${orderId}`)).json;
  // With the application's plain HTTP off, the authority's HTTP-01 request could not reach the
  // plain port (127.0.0.1 only): the renewal is answered on the HTTPS door.
  const off = await admin.put('/api/settings/tls/ports/app', { http: false });
  assert.equal(off.status, 200, off.text);
  const seen = t.logs.length;
  const lifetime = before.notAfter - before.notBefore;
  await t.gw.ctx.advanceClock!(Math.ceil(lifetime * 0.7) * 1000);
  // Years went by on the test clock: the console session is long expired.
  admin = await signInAdmin(t.url('control'));
  const renewed = await settled(orderId, (r) => r.fingerprint !== before.fingerprint);
  assert.ok(renewed.notAfter >= before.notAfter);
  assert.ok(t.logs.some((l) => l.msg === 'acme certificate renewed' && l.attrs.certificate === orderId));
  assert.ok(t.logs.slice(seen).some((l) => l.msg === 'acme challenge valid' && l.attrs.name === APP && l.attrs.challenge === 'tls-alpn-01'), `renewed by TLS-ALPN-01: ${JSON.stringify(t.logs.slice(seen).filter((l) => l.msg.startsWith('acme')).map((l) => [l.msg, l.attrs.name, l.attrs.challenge]))}`);
  assert.equal((await presented(APP, await pebble.issuerRoots())).fingerprint256, renewed.fingerprint);
  assert.equal((await admin.put('/api/settings/tls/ports/app', { http: true })).status, 200);
});

test('the community edition answers 403 licensed-edition for authorities and orders', async () => {
  const community = await startTestGateway();
  try {
    const other = await signInAdmin(community.url('control'));
    for (const a of [
      await other.get('/api/acme/authorities'),
      await other.post('/api/acme/authorities', { name: 'x', directory: 'https://127.0.0.1/dir', termsAccepted: true }),
      await other.post('/api/certificates', { source: 'acme', authority: 'x', names: [APP] }),
    ]) {
      assert.equal(a.status, 403, a.text);
      assert.equal(a.json.code, 'licensed-edition');
    }
  } finally {
    await community.close();
  }
});
