/**
 * Proxy mode (spec 1.2 rules 13-18; CONTRACT.md "TLS"): declared public names, who is believed
 * for forwarded headers, certificates inactive in a mode and serving again, the issuer of signed
 * identities, and the console change that would sign the operator out.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:tls';
import { startTestGateway, ROOT_PASSWORD, type TestGateway } from '../helpers/gateway.ts';
import { signInAdmin, personWithToken, type Admin } from '../helpers/admin.ts';
import { call } from '../helpers/http.ts';
import { startUpstream, type Upstream } from '../helpers/upstream.ts';

let t: TestGateway;
let admin: Admin;
let up: Upstream;
let token: string;
let certId: string;

const httpsPort = () => t.gw.doors.find((d) => d.plane === 'data' && d.protocol === 'https')?.port;

function handshake(port: number, servername: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect({ port, host: '127.0.0.1', servername, rejectUnauthorized: false }, () => {
      resolve(s.getPeerCertificate().subjectaltname ?? '');
      s.end();
    });
    s.on('error', reject);
  });
}

async function door(plane: string, body: unknown, who: Admin = admin) {
  return who.put(`/api/settings/tls/doors/${plane}`, body);
}

before(async () => {
  t = await startTestGateway({ GATEWAY_CLOCK: 'manual' });
  admin = await signInAdmin(t.url('control'));
  up = await startUpstream();
  await admin.put('/api/routes/shop', { upstream: up.origin, paths: ['/shop'], rule: null, identity: 'jwt' });
  await admin.put('/api/roles/reader', {});
  ({ token } = await personWithToken(admin, 'paula', ['reader']));
  const cert = await admin.post('/api/certificates', { source: 'self-signed', names: ['shop.example.test'] });
  assert.equal(cert.status, 201, cert.text);
  certId = cert.json.id;
});

after(async () => {
  await t?.close();
  await up?.close();
});

test('declared names are host names only, each with its reason', async () => {
  for (const [name, reason] of [['https://shop.example.test', /scheme/], ['shop.example.test:8443', /port/], ['shop.example.test/x', /path/], ['10.0.0.1', /IP address/], ['*.example.test', /wildcard/]] as const) {
    const a = await door('app', { proxied: true, names: [name] });
    assert.equal(a.status, 400, a.text);
    assert.equal(a.json.code, 'tls.name-invalid');
    assert.match(a.json.detail, reason);
  }
  const bad = await door('app', { proxied: true, names: [], proxyAddresses: ['10.0.0.0/33'] });
  assert.equal(bad.status, 400, bad.text);
  assert.equal(bad.json.code, 'tls.proxy-address-invalid');
});

test('served by the gateway, a declared name needs a certificate placed on the plane', async () => {
  const refused = await door('app', { proxied: false, names: ['shop.example.test'] });
  assert.equal(refused.status, 400, refused.text);
  assert.equal(refused.json.code, 'tls.name-invalid');
  assert.match(refused.json.detail, /no certificate placed/);
  assert.equal((await admin.put(`/api/certificates/${certId}/placement`, { planes: ['app'] })).status, 200);
  const ok = await door('app', { proxied: false, names: ['shop.example.test'] });
  assert.equal(ok.status, 200, ok.text);
  assert.deepEqual(ok.json.doors.app.names, ['shop.example.test']);
  assert.deepEqual(ok.json.doors.app.uncovered, []);
  const audit = await admin.get('/api/audit?targetKind=settings');
  const line = audit.json.events.find((e: { action: string }) => e.action === 'tls.door');
  assert.ok(line, audit.text);
  assert.equal(line.actor.account, 'root');
});

test('a name belongs to one plane', async () => {
  const a = await door('console', { proxied: true, names: ['shop.example.test'] });
  assert.equal(a.status, 400, a.text);
  assert.equal(a.json.code, 'tls.name-invalid');
  assert.match(a.json.detail, /application plane/);
});

test('the issuer of signed identities is https://<first application name>, whatever the Host', async () => {
  const r = await call(`${t.url('data')}/shop/x`, { headers: { authorization: `Bearer ${token}`, host: 'elsewhere.test' } });
  assert.equal(r.status, 200, r.text);
  const jwt = String(up.last().headers['x-gateway-identity']);
  const claims = JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8'));
  assert.equal(claims.iss, 'https://shop.example.test');
});

test('served by the gateway with names declared, forwarded headers are believed from nobody', async () => {
  await call(`${t.url('data')}/shop/x`, { headers: { 'x-forwarded-for': '203.0.113.9', 'x-forwarded-proto': 'https' } });
  assert.equal(up.last().headers['x-forwarded-for'], '127.0.0.1');
  assert.equal(up.last().headers['x-forwarded-proto'], 'http');
});

test('behind a proxy: believed from loopback and private ranges by default, from the declared addresses otherwise', async () => {
  assert.equal((await door('app', { proxied: true, names: ['shop.example.test'] })).status, 200);
  await call(`${t.url('data')}/shop/x`, { headers: { 'x-forwarded-for': '203.0.113.9, 10.1.2.3', 'x-forwarded-proto': 'https', host: 'other.test' } });
  assert.equal(up.last().headers['x-forwarded-for'], '203.0.113.9', 'the last hop no trusted proxy added');
  assert.equal(up.last().headers['x-forwarded-proto'], 'https');
  // A request for a public name is HTTPS: the proxy presents that name.
  await call(`${t.url('data')}/shop/x`, { headers: { host: 'shop.example.test' } });
  assert.equal(up.last().headers['x-forwarded-proto'], 'https');
  assert.equal((await door('app', { proxied: true, names: ['shop.example.test'], proxyAddresses: ['192.0.2.0/24'] })).status, 200);
  await call(`${t.url('data')}/shop/x`, { headers: { 'x-forwarded-for': '203.0.113.9', 'x-forwarded-proto': 'https', host: 'other.test' } });
  assert.equal(up.last().headers['x-forwarded-for'], '127.0.0.1', 'loopback is not a declared proxy address');
  assert.equal(up.last().headers['x-forwarded-proto'], 'http');
});

test('a certificate that does not fit the mode stays placed, inactive, and serves again when the plane switches back', async () => {
  // Behind a proxy, the proxy presents the public names: the certificate carrying them rests.
  const listed = (await admin.get(`/api/certificates/${certId}`)).json;
  assert.deepEqual(listed.planes, ['app']);
  assert.deepEqual(listed.inactive, ['app']);
  assert.equal(httpsPort(), undefined, 'nothing to present: the HTTPS door is closed');
  assert.equal((await door('app', { proxied: false, names: ['shop.example.test'] })).status, 200);
  assert.deepEqual((await admin.get(`/api/certificates/${certId}`)).json.inactive, []);
  const port = httpsPort();
  assert.ok(port, 'the door opened again');
  assert.equal(await handshake(port, 'shop.example.test'), 'DNS:shop.example.test');
});

test('a console change that would make the operator\'s own session plain HTTP is refused (409)', async () => {
  // The console behind a proxy on loopback: this session arrives as HTTPS through it.
  // The browser's page is https: its Origin says so.
  const viaProxy: Admin = { ...admin, headers: { ...admin.headers, 'x-forwarded-proto': 'https', origin: admin.control.replace(/^http:/, 'https:') } } as Admin;
  const proxied = await door('console', { proxied: true, names: ['console.example.test'] });
  assert.equal(proxied.status, 200, proxied.text);
  const through = async (body: unknown) => call(`${admin.control}/api/settings/tls/doors/console`, { method: 'PUT', headers: viaProxy.headers, body });
  const refused = await through({ proxied: false, names: [] });
  assert.equal(refused.status, 409, refused.text);
  assert.equal(refused.json.code, 'tls.session-would-drop');
  const stillProxied = await admin.get('/api/settings/tls');
  assert.equal(stillProxied.json.doors.console.proxied, true);
  // Keeping the proxy believed is fine.
  assert.equal((await through({ proxied: true, names: ['console.example.test'], proxyAddresses: ['127.0.0.1'] })).status, 200);
});

test('the console behind a proxy that terminates HTTPS: sign-in, writes and the Secure cookie follow the browser\'s scheme', async () => {
  const proxied = await door('console', { proxied: true, names: ['console.example.test'] });
  assert.equal(proxied.status, 200, proxied.text);
  try {
    const browser = { host: 'console.example.test', 'x-forwarded-proto': 'https', origin: 'https://console.example.test' };
    const signIn = await call(`${admin.control}/api/session`, { method: 'POST', headers: browser, body: { name: 'root', password: ROOT_PASSWORD } });
    assert.equal(signIn.status, 200, signIn.text);
    const setCookie = String(signIn.headers['set-cookie']);
    assert.match(setCookie, /; Secure/, 'the browser is on https: the cookie says Secure');
    const cookie = setCookie.split(';')[0]!;
    const write = await call(`${admin.control}/api/roles/proxied-write`, { method: 'PUT', headers: { ...browser, cookie }, body: {} });
    assert.ok(write.status === 200 || write.status === 201, write.text);
    const plainOrigin = await call(`${admin.control}/api/roles/proxied-write`, { method: 'PUT', headers: { ...browser, cookie, origin: 'http://console.example.test' }, body: {} });
    assert.equal(plainOrigin.status, 403, 'a page on http is another origin');
    assert.equal(plainOrigin.json.code, 'origin-mismatch');
    const out = await call(`${admin.control}/api/session`, { method: 'DELETE', headers: { ...browser, cookie } });
    assert.match(String(out.headers['set-cookie']), /Max-Age=0; Secure/);
  } finally {
    assert.equal((await door('console', { proxied: false, names: [] })).status, 200);
  }
});

test('behind a proxy, the trail records the client the door resolved, and a hop that is not an address is no hop', async () => {
  assert.equal((await door('app', { proxied: true, names: [] })).status, 200);
  try {
    await call(`${t.url('data')}/shop/x`, { headers: { 'x-forwarded-for': '1.1.1.1 forged=1 user=root' } });
    assert.equal(up.last().headers['x-forwarded-for'], '127.0.0.1', 'text that is not an address is not believed: the client is the proxy that sent it');
    await call(`${t.url('data')}/shop/x`, { headers: { 'x-forwarded-for': '198.51.100.23, not-an-address' } });
    assert.equal(up.last().headers['x-forwarded-for'], '127.0.0.1');
    const refused = await call(`${t.url('data')}/.meerkat/session`, { method: 'POST', headers: { 'x-forwarded-for': '198.51.100.23' }, body: { name: 'paula', password: 'not her password' } });
    assert.equal(refused.status, 401);
    await t.gw.ctx.audit.call('audit.settle', null);
    const lines = (await admin.get('/api/audit?kind=signin.refused&limit=5')).json.events as Array<{ address: string; target: { name: string } }>;
    assert.equal(lines.find((e) => e.target.name === 'paula')?.address, '198.51.100.23', 'the address the door resolved, not the proxy\'s');
    const logged = t.logs.filter((r) => r.msg === 'sign-in refused');
    assert.ok(logged.length > 0, 'the refusal is logged');
    assert.doesNotMatch(JSON.stringify(logged), /paula|198\.51\.100\.23|bad-credentials/, 'the operational log does not say who tried, from where or why');
  } finally {
    assert.equal((await door('app', { proxied: false, names: [] })).status, 200);
  }
});
