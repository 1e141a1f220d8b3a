/**
 * What counts as a certificate that serves (spec 1.2 rules 1, 6, 9, 14; 3.2): the safety rules of
 * the plain ports and the last certificate count certificates a client can trust now, not rows:
 * one not valid yet, or inactive in the plane's mode, serves nothing. A certificate's state moves
 * with the clock; an IP entry serves a client that called the address; the redirect keeps its
 * HSTS duration when a PUT leaves it out. The gateway's test clock starts thirty days back, so a
 * certificate made by openssl now is not valid yet for it.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect as netConnect } from 'node:net';
import { connect, type PeerCertificate } from 'node:tls';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { signInAdmin, type Admin } from '../helpers/admin.ts';
import { call } from '../helpers/http.ts';
import { refused } from '../helpers/refused.ts';
import { openSslKit, type OpenSslKit } from '../helpers/openssl.ts';

const DAY_MS = 86_400_000;
let t: TestGateway;
let root: Admin;
let kit: OpenSslKit;

before(async () => {
  t = await startTestGateway({ GATEWAY_CLOCK: 'manual', GATEWAY_CLOCK_START: String(Date.now() - 30 * DAY_MS) });
  root = await signInAdmin(t.url('control'));
  kit = openSslKit();
  kit.authority();
});
after(async () => {
  kit?.remove();
  await t?.close();
});

/** Moves the test clock, and signs in again: the console session ran out meanwhile. */
async function advance(by: string): Promise<void> {
  assert.equal((await call(`${t.url('control')}/__clock/advance`, { method: 'POST', body: { by } })).status, 200);
  root = await signInAdmin(t.url('control'));
}

async function created(body: Record<string, unknown>): Promise<string> {
  const a = await root.post('/api/certificates', body);
  assert.equal(a.status, 201, a.text);
  return a.json.id;
}

async function certificate(id: string): Promise<{ state: string; detail: string | null; planes: string[]; inactive: string[] }> {
  const a = await root.get(`/api/certificates/${id}`);
  assert.equal(a.status, 200, a.text);
  return a.json;
}

function httpsPort(): number {
  const door = t.gw.doors.find((d) => d.plane === 'data' && d.protocol === 'https');
  assert.ok(door, 'the data plane has an HTTPS door');
  return door.port;
}

/** The certificate presented to a client that calls 127.0.0.1 and sends no server name. */
function presentedToAddress(): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: httpsPort(), rejectUnauthorized: false }, () => {
      const cert = socket.getPeerCertificate();
      socket.end();
      resolve(cert);
    });
    socket.once('error', reject);
  });
}

test('a certificate not valid yet serves nothing: it cannot take the place of one that does, nor let HTTP go off', async () => {
  const served = await created({ source: 'self-signed', names: ['app.test'] });
  assert.equal((await root.put(`/api/certificates/${served}/placement`, { planes: ['app'] })).status, 200);
  assert.equal((await root.put('/api/settings/tls/ports/app', { http: false })).status, 200, 'the self-signed one serves');

  const leaf = kit.leaf('early', 'DNS:app.test', { days: 90 });
  const early = await created({ source: 'import', cert: leaf.cert, key: leaf.key });
  const read = await certificate(early);
  assert.equal(read.state, 'not-yet-valid');
  assert.match(String(read.detail), /^valid from \d{4}-\d\d-\d\dT.*clients refuse it until then/);

  refused(await root.put(`/api/certificates/${early}/placement`, { planes: ['app'] }), 409, 'tls.name-taken', 'a name another answers');
  const replacing = await root.put(`/api/certificates/${early}/placement`, { planes: ['app'], replace: true });
  refused(replacing, 409, 'tls.last-certificate', 'replacing the one serving by one not valid yet');
  assert.match(replacing.json.detail, /no certificate on the application plane would serve HTTPS .* not yet valid/);
  assert.deepEqual((await certificate(served)).planes, ['app'], 'nothing moved');

  // Declared behind a proxy, the plane serves only what does not carry its public names: nothing here.
  const proxied = await root.put('/api/settings/tls/doors/app', { proxied: true, names: ['app.test'], proxyAddresses: ['10.0.0.0/8'] });
  refused(proxied, 409, 'tls.last-certificate', 'a mode that leaves every certificate inactive');
  assert.deepEqual((await certificate(served)).inactive, [], 'the mode did not change');

  assert.equal((await root.put('/api/settings/tls/ports/app', { http: true })).status, 200);
  assert.equal((await root.del(`/api/certificates/${served}`)).status, 204);
  assert.equal((await root.put(`/api/certificates/${early}/placement`, { planes: ['app'] })).status, 200);
  refused(await root.put('/api/settings/tls/ports/app', { http: false }), 409, 'tls.nothing-to-present', 'HTTP off with only a certificate not valid yet');
  refused(await root.put('/api/settings/tls/redirect', { forceHttps: true }), 409, 'tls.nothing-to-present', 'the redirect to a certificate not valid yet');
  const declared = await root.put('/api/settings/tls/doors/app', { proxied: false, names: ['app.test'] });
  refused(declared, 400, 'tls.name-invalid', 'a public name only a certificate not valid yet carries (spec 7: no served certificate covers it)');
  assert.match(declared.json.detail, /no certificate placed on the application plane that serves now/);
  assert.deepEqual((await root.get('/api/settings/tls')).json.doors.app.uncovered, [], 'nothing declared');

  // Its start comes: the state follows the clock without anything written, and it serves.
  await advance('P31D');
  assert.equal((await certificate(early)).state, 'active');
  assert.equal((await root.put('/api/settings/tls/ports/app', { http: false })).status, 200);
  assert.equal((await root.put('/api/settings/tls/ports/app', { http: true })).status, 200);
  assert.equal((await root.put('/api/settings/tls/doors/app', { proxied: false, names: ['app.test'] })).status, 200, 'now it serves the name');

  // And its end: expired, again without a write in between; the declared name is uncovered again.
  await advance('P91D');
  const ended = await certificate(early);
  assert.equal(ended.state, 'expired');
  assert.match(String(ended.detail), /^expired/);
  assert.deepEqual((await root.get('/api/settings/tls')).json.doors.app.uncovered, ['app.test']);
  assert.equal((await root.put('/api/settings/tls/doors/app', { proxied: false, names: [] })).status, 200);
  assert.equal((await root.del(`/api/certificates/${early}`)).status, 204);
});

test('a client that calls an address gets the certificate carrying that address, not the oldest placed', async () => {
  const older = await created({ source: 'self-signed', names: ['shop.test'] });
  assert.equal((await root.put(`/api/certificates/${older}/placement`, { planes: ['app'] })).status, 200);
  const byAddress = await created({ source: 'self-signed', names: ['127.0.0.1'] });
  assert.equal((await root.put(`/api/certificates/${byAddress}/placement`, { planes: ['app'] })).status, 200);
  const presented = await presentedToAddress();
  assert.match(String(presented.subjectaltname), /IP Address:127\.0\.0\.1/, `presented: ${presented.subjectaltname}`);

  // Without a certificate for the address, the fallback stays the oldest placed (rule 9).
  assert.equal((await root.put(`/api/certificates/${byAddress}/placement`, { planes: [] })).status, 200);
  assert.match(String((await presentedToAddress()).subjectaltname), /DNS:shop\.test/);
  for (const id of [older, byAddress]) assert.equal((await root.del(`/api/certificates/${id}`)).status, 204);
});

test('a redirect PUT without hstsMaxAge keeps the duration set', async () => {
  const id = await created({ source: 'self-signed', names: ['app.test'] });
  assert.equal((await root.put(`/api/certificates/${id}/placement`, { planes: ['app'] })).status, 200);
  assert.equal((await root.put('/api/settings/tls/redirect', { forceHttps: true, hstsMaxAge: 600 })).json.redirect.hstsMaxAge, 600);
  const off = await root.put('/api/settings/tls/redirect', { forceHttps: false });
  assert.equal(off.status, 200, off.text);
  assert.deepEqual(off.json.redirect, { forceHttps: false, hstsMaxAge: 600 });
  const on = await root.put('/api/settings/tls/redirect', { forceHttps: true });
  assert.deepEqual(on.json.redirect, { forceHttps: true, hstsMaxAge: 600 });
  await root.put('/api/settings/tls/redirect', { forceHttps: false });
  assert.equal((await root.del(`/api/certificates/${id}`)).status, 204);
});

test('TLS 1.2 offers forward-secret AEAD suites only: a client asking static RSA with CBC-SHA1 is refused', async () => {
  const id = await created({ source: 'self-signed', names: ['suites.test'] });
  assert.equal((await root.put(`/api/certificates/${id}/placement`, { planes: ['app'] })).status, 200);
  const handshake = (options: { ciphers: string; maxVersion: 'TLSv1.2' }) => new Promise<string>((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: httpsPort(), servername: 'suites.test', rejectUnauthorized: false, ...options }, () => {
      const suite = socket.getCipher().name;
      socket.end();
      resolve(suite);
    });
    socket.once('error', reject);
  });
  assert.equal(await handshake({ ciphers: 'ECDHE-RSA-AES128-GCM-SHA256', maxVersion: 'TLSv1.2' }), 'ECDHE-RSA-AES128-GCM-SHA256');
  await assert.rejects(handshake({ ciphers: 'AES128-SHA', maxVersion: 'TLSv1.2' }), /handshake failure|no shared cipher|alert/i);
  await assert.rejects(handshake({ ciphers: 'ECDHE-RSA-AES128-SHA', maxVersion: 'TLSv1.2' }), /handshake failure|no shared cipher|alert/i);
  assert.equal((await root.del(`/api/certificates/${id}`)).status, 204);
});

test('a refused handshake ends with an alert that says why: an ACME validation no order waits on, a ClientHello that is none', async () => {
  const id = await created({ source: 'self-signed', names: ['alert.test'] });
  assert.equal((await root.put(`/api/certificates/${id}/placement`, { planes: ['app'] })).status, 200);
  const acme = await new Promise<Error>((resolve) => {
    const socket = connect({ host: '127.0.0.1', port: httpsPort(), servername: 'nobody.test', ALPNProtocols: ['acme-tls/1'], rejectUnauthorized: false }, () => resolve(new Error('the handshake was accepted')));
    socket.once('error', resolve);
  });
  assert.match(String((acme as NodeJS.ErrnoException).code ?? acme.message), /NO_APPLICATION_PROTOCOL/i, acme.message);

  // Not TLS at all: a decode_error record, then the close.
  const answer = await new Promise<Buffer>((resolve, reject) => {
    const raw = netConnect({ host: '127.0.0.1', port: httpsPort() }, () => raw.write('GET / HTTP/1.1\r\nHost: alert.test\r\n\r\n'));
    const chunks: Buffer[] = [];
    raw.on('data', (c: Buffer) => chunks.push(c));
    raw.once('close', () => resolve(Buffer.concat(chunks)));
    raw.once('error', reject);
  });
  assert.deepEqual([...answer], [0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 50]);
  assert.equal((await root.del(`/api/certificates/${id}`)).status, 204);
});
