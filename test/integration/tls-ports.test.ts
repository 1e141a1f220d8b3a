/**
 * The plain ports, the console traffic rule, the redirect and HSTS, through real sockets on both
 * kinds of door (spec 1.2 rules 6, 7, 11, 12; 3.2; section 7; CONTRACT.md "TLS"). One gateway on
 * bound random ports, one that believes the world reaches it on 443 and 80.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, ROOT_PASSWORD, type TestGateway } from '../helpers/gateway.ts';
import { putOk, signInAdmin, type Admin } from '../helpers/admin.ts';
import { call } from '../helpers/http.ts';
import { refused } from '../helpers/refused.ts';
import { callHttps, signInHttps } from '../helpers/https.ts';
import { openSslKit, type OpenSslKit } from '../helpers/openssl.ts';
import { rawRequest, startUpstream, type Upstream } from '../helpers/upstream.ts';

function doorPort(t: TestGateway, plane: 'data' | 'control', protocol: 'http' | 'https'): number {
  const door = t.gw.doors.find((d) => d.plane === plane && d.protocol === protocol);
  assert.ok(door, `the ${plane} plane has an open ${protocol} door`);
  return door.port;
}

async function created(admin: Admin, body: Record<string, unknown>): Promise<string> {
  const a = await admin.post('/api/certificates', body);
  assert.equal(a.status, 201, a.text);
  return a.json.id;
}

async function place(admin: Admin, id: string, planes: string[]): Promise<void> {
  const a = await admin.put(`/api/certificates/${id}/placement`, { planes });
  assert.equal(a.status, 200, a.text);
}

/** A plain GET on the data plane with the Host given (undici would not send it as written). */
function plainGet(t: TestGateway, host: string, target: string) {
  return rawRequest(doorPort(t, 'data', 'http'), `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
}

function header(lines: readonly string[], name: string): string | undefined {
  const line = lines.find((l) => l.toLowerCase().startsWith(`${name}:`));
  return line?.slice(name.length + 1).trim();
}

describe('on bound random ports', () => {
  let t: TestGateway;
  let root: Admin;
  let kit: OpenSslKit;
  const advance = (by: string) => call(`${t.url('control')}/__clock/advance`, { method: 'POST', body: { by } });

  before(async () => {
    t = await startTestGateway({ GATEWAY_CLOCK: 'manual' });
    root = await signInAdmin(t.url('control'));
    kit = openSslKit();
    kit.authority();
  });
  after(async () => {
    kit?.remove();
    await t?.close();
  });

  let appCert = '';

  test('HTTP goes off only while a certificate serves HTTPS; the switch is audited (rule 6)', async () => {
    refused(await root.put('/api/settings/tls/ports/app', { http: false }), 409, 'tls.nothing-to-present', 'no certificate on app');
    assert.deepEqual((await root.get('/api/settings/tls')).json.closed.app, [], 'the refusal changed nothing');

    appCert = await created(root, { source: 'self-signed', names: ['app.example.test'] });
    await place(root, appCert, ['app']);
    const off = await root.put('/api/settings/tls/ports/app', { http: false });
    assert.equal(off.status, 200, off.text);
    assert.deepEqual(off.json.closed.app, ['http']);
    const settings = await root.get('/api/settings/tls');
    assert.deepEqual(settings.json.closed, { console: [], app: ['http'], internal: [] });

    await t.gw.ctx.audit.call('audit.settle', null);
    const trail = await root.get('/api/audit?kind=tls.ports');
    assert.equal(trail.status, 200, trail.text);
    const [line] = trail.json.events;
    assert.ok(line, 'a tls.ports line');
    assert.equal(line.action, 'tls.ports');
    assert.equal(line.target.kind, 'settings');
    assert.deepEqual(line.actor, { account: 'root' });
    assert.ok(line.changes.some((c: any) => c.field === 'http' && c.from === true && c.to === false), JSON.stringify(line.changes));
  });

  test('the last certificate of a plane stays while its HTTP is off (rule 6)', async () => {
    refused(await root.del(`/api/certificates/${appCert}`), 409, 'tls.last-certificate', 'delete');
    refused(await root.put(`/api/certificates/${appCert}/placement`, { planes: [] }), 409, 'tls.last-certificate', 'placement leaving app');
    assert.deepEqual((await root.get(`/api/certificates/${appCert}`)).json.planes, ['app'], 'still placed');

    const on = await root.put('/api/settings/tls/ports/app', { http: true });
    assert.equal(on.status, 200, on.text);
    assert.deepEqual(on.json.closed.app, []);
    await place(root, appCert, []);
    assert.equal((await root.del(`/api/certificates/${appCert}`)).status, 204);
    assert.equal(t.gw.doors.find((d) => d.plane === 'data' && d.protocol === 'https'), undefined, 'the HTTPS door closed with its last certificate');
  });

  test('console: HTTP stays on while plain calls came within 30 s, the last certificate while HTTPS is used (rule 7)', async () => {
    const id = await created(root, { source: 'self-signed', names: ['localhost', '127.0.0.1'] });
    await place(root, id, ['console']);
    const https = `https://127.0.0.1:${doorPort(t, 'control', 'https')}`;

    const plain = await root.put('/api/settings/tls/ports/console', { http: false });
    refused(plain, 409, 'tls.http-in-use', 'asked through the plain door');
    assert.match(plain.json.detail, /this very request/);

    const secure = await signInHttps(https, 'root', ROOT_PASSWORD);
    const viaHttps = (method: string, path: string, body?: unknown) => callHttps(`${https}${path}`, { method, headers: secure, ...(body !== undefined ? { body } : {}) });
    const inWindow = await viaHttps('PUT', '/api/settings/tls/ports/console', { http: false });
    refused(inWindow, 409, 'tls.http-in-use', 'asked through HTTPS while plain calls came in the window');
    assert.match(inWindow.json.detail, /127\.0\.0\.1/, 'names the peer');

    // The clock moves through HTTPS; probes over plain HTTP are not console traffic.
    assert.equal((await callHttps(`${https}/__clock/advance`, { method: 'POST', body: { by: 'PT31S' } })).status, 200);
    assert.equal((await call(`${t.url('control')}/healthz`)).status, 200);
    assert.equal((await call(`${t.url('control')}/readyz`)).status, 200);
    const off = await viaHttps('PUT', '/api/settings/tls/ports/console', { http: false });
    assert.equal(off.status, 200, off.text);
    assert.deepEqual(off.json.closed.console, ['http']);
    const traffic = (await viaHttps('GET', '/api/settings/tls')).json.consoleTraffic;
    assert.deepEqual(traffic.find((e: any) => e.door === 'https')?.peer, '127.0.0.1', JSON.stringify(traffic));
    assert.deepEqual(traffic.find((e: any) => e.door === 'http'), { door: 'http', peer: null, lastSeen: null }, JSON.stringify(traffic));

    // HTTP on again, so only the HTTPS traffic holds the last certificate.
    assert.equal((await viaHttps('PUT', '/api/settings/tls/ports/console', { http: true })).status, 200);
    refused(await viaHttps('DELETE', `/api/certificates/${id}`), 409, 'tls.last-certificate', 'removed through HTTPS');
    refused(await viaHttps('PUT', `/api/certificates/${id}/placement`, { planes: ['app'] }), 409, 'tls.last-certificate', 'moved off the console through HTTPS');
    assert.equal((await advance('PT31S')).status, 200);
    assert.equal((await root.del(`/api/certificates/${id}`)).status, 204, 'no HTTPS call for 31 s');
  });

  test('validation: hstsMaxAge at most two years, known planes, a boolean http', async () => {
    const long = await root.put('/api/settings/tls/redirect', { forceHttps: false, hstsMaxAge: 63_072_001 });
    refused(long, 400, 'field.invalid', 'hstsMaxAge too long');
    assert.equal(long.json.field, 'hstsMaxAge');
    const negative = await root.put('/api/settings/tls/redirect', { forceHttps: false, hstsMaxAge: -1 });
    assert.equal(negative.json.field, 'hstsMaxAge', negative.text);
    const plane = await root.put('/api/settings/tls/ports/data', { http: false });
    assert.equal(plane.status, 400, plane.text);
    assert.equal(plane.json.field, 'plane');
    for (const http of ['false', 0, null]) {
      const a = await root.put('/api/settings/tls/ports/app', { http });
      assert.equal(a.status, 400, `${JSON.stringify(http)}: ${a.text}`);
      assert.equal(a.json.field, 'http');
    }
    const kept = (await root.get('/api/settings/tls')).json;
    assert.equal(kept.redirect.hstsMaxAge, 86_400, 'one day by default, unchanged');
  });

  test('redirect: 308 to the HTTPS door for names a valid certificate carries, never the probes (rule 11)', async () => {
    refused(await root.put('/api/settings/tls/redirect', { forceHttps: true, hstsMaxAge: 3600 }), 409, 'tls.nothing-to-present', 'no certificate on app');
    const leaf = kit.leaf('app', 'DNS:app.example.test', { days: 1 });
    const id = await created(root, { source: 'import', cert: leaf.cert + kit.read('ca.pem'), key: leaf.key });
    await place(root, id, ['app']);
    const set = await root.put('/api/settings/tls/redirect', { forceHttps: true, hstsMaxAge: 3600 });
    assert.equal(set.status, 200, set.text);
    assert.deepEqual(set.json.redirect, { forceHttps: true, hstsMaxAge: 3600 });

    const port = doorPort(t, 'data', 'http');
    const moved = await plainGet(t, `app.example.test:${port}`, '/x?y=1');
    assert.equal(moved.status, 308, moved.head);
    assert.equal(header(moved.headerLines, 'location'), `https://app.example.test:${doorPort(t, 'data', 'https')}/x?y=1`);
    for (const probe of ['/healthz', '/readyz']) {
      assert.equal((await plainGet(t, `app.example.test:${port}`, probe)).status, 200, probe);
    }
    const other = await plainGet(t, `other.test:${port}`, '/x');
    assert.notEqual(other.status, 308, 'no certificate carries other.test');

    // A wildcard stands for one label: a Host a URL parser reads as another site is never sent on.
    const wild = kit.leaf('wild', 'DNS:*.wild.test', { days: 1 });
    await place(root, await created(root, { source: 'import', cert: wild.cert + kit.read('ca.pem'), key: wild.key }), ['app']);
    const https = doorPort(t, 'data', 'https');
    assert.equal(header((await plainGet(t, `shop.wild.test:${port}`, '/x')).headerLines, 'location'), `https://shop.wild.test:${https}/x`);
    for (const host of ['2130706433?.wild.test', 'evil/.wild.test', 'evil\\.wild.test', 'evil;.wild.test', 'a%2f.wild.test']) {
      const steered = await plainGet(t, host, '/x');
      assert.notEqual(steered.status, 308, `${host}: ${steered.head}`);
    }

    // Bound random ports are not 443 and 80: HTTPS answers tell browsers to forget (rule 12).
    const secure = await callHttps(`https://127.0.0.1:${doorPort(t, 'data', 'https')}/x`, { servername: 'app.example.test', headers: { host: 'app.example.test' } });
    assert.equal(secure.headers['strict-transport-security'], 'max-age=0');
  });

  test('the redirect retreats once every certificate for the name has expired (rule 12)', async () => {
    assert.equal((await advance('P2D')).status, 200);
    const port = doorPort(t, 'data', 'http');
    const served = await plainGet(t, `app.example.test:${port}`, '/x?y=1');
    assert.notEqual(served.status, 308, served.head);
  });
});

describe('reached by the world on 443 and 80', () => {
  let t: TestGateway;
  let root: Admin;
  let kit: OpenSslKit;
  let up: Upstream;
  let https = '';
  const get = (path: string, host: string) => callHttps(`${https}${path}`, { servername: 'app.example.test', headers: { host } });

  before(async () => {
    t = await startTestGateway({ GATEWAY_CLOCK: 'manual', GATEWAY_PUBLIC_PORTS: 'app=443,app-http=80' });
    root = await signInAdmin(t.url('control'));
    kit = openSslKit();
    kit.authority();
    up = await startUpstream((req, res, received) => {
      const own = req.url?.startsWith('/own') ? { 'Strict-Transport-Security': 'max-age=120' } : {};
      const body = JSON.stringify(received);
      res.writeHead(200, { 'content-type': 'application/json', ...own });
      res.end(body);
    });
    await putOk(root, '/api/routes/echo', { upstream: up.origin, paths: ['/echo'], rule: null });
    await putOk(root, '/api/routes/own', { upstream: up.origin, paths: ['/own'], rule: null });
    const leaf = kit.leaf('app', 'DNS:app.example.test');
    const id = await created(root, { source: 'import', cert: leaf.cert, key: leaf.key });
    await place(root, id, ['app']);
    https = `https://127.0.0.1:${doorPort(t, 'data', 'https')}`;
  });
  after(async () => {
    kit?.remove();
    await up?.close();
    await t?.close();
  });

  test('HSTS with the chosen duration for a served name; the redirect carries no port (rule 12)', async () => {
    const set = await root.put('/api/settings/tls/redirect', { forceHttps: true, hstsMaxAge: 3600 });
    assert.equal(set.status, 200, set.text);
    const a = await get('/echo', 'app.example.test');
    assert.equal(a.status, 200, a.text);
    assert.equal(a.headers['strict-transport-security'], 'max-age=3600');
    assert.doesNotMatch(String(a.headers['strict-transport-security']), /includeSubDomains/i);
    // Refusals included: the gateway's own answer carries it as the service's does.
    const refused = await get('/no-route-here', 'app.example.test');
    assert.equal(refused.status, 404, refused.text);
    assert.equal(refused.headers['strict-transport-security'], 'max-age=3600');

    const moved = await plainGet(t, 'app.example.test', '/x?y=1');
    assert.equal(moved.status, 308, moved.head);
    assert.equal(header(moved.headerLines, 'location'), 'https://app.example.test/x?y=1');
  });

  test('never to localhost or an IP address, never over the service\'s own value', async () => {
    for (const host of ['localhost', '127.0.0.1', `127.0.0.1:${doorPort(t, 'data', 'https')}`]) {
      const a = await get('/echo', host);
      assert.equal(a.status, 200, `${host}: ${a.text}`);
      assert.equal(a.headers['strict-transport-security'], undefined, host);
    }
    const own = await get('/own', 'app.example.test');
    assert.equal(own.status, 200, own.text);
    assert.equal(own.headers['strict-transport-security'], 'max-age=120', 'the service\'s value is kept');
  });

  test('Force HTTPS off sends max-age=0', async () => {
    const set = await root.put('/api/settings/tls/redirect', { forceHttps: false, hstsMaxAge: 3600 });
    assert.equal(set.status, 200, set.text);
    const a = await get('/echo', 'app.example.test');
    assert.equal(a.headers['strict-transport-security'], 'max-age=0');
    assert.notEqual((await plainGet(t, 'app.example.test', '/x')).status, 308, 'no redirect any more');
  });
});

test('a plain port switched off listens on 127.0.0.1 only from the next start\'s first bind (rule 6)', async () => {
  const env = { GATEWAY_ADDR: '0.0.0.0:0' };
  const t = await startTestGateway(env);
  let again: TestGateway | undefined;
  try {
    const root = await signInAdmin(t.url('control'));
    await place(root, await created(root, { source: 'self-signed', names: ['app.example.test'] }), ['app']);
    assert.equal((await root.put('/api/settings/tls/ports/app', { http: false })).status, 200);
    await t.gw.stop();
    again = await startTestGateway(env, t.db);
    const binds = again.logs.filter((l) => l.msg === 'listening' && l.attrs.plane === 'data' && l.attrs.protocol === 'http').map((l) => l.attrs.address);
    assert.equal(binds.length, 1, JSON.stringify(binds));
    assert.match(String(binds[0]), /^127\.0\.0\.1:\d+$/, 'never on every interface, not even for a moment');
    assert.equal(again.logs.some((l) => l.msg === 'plain HTTP port now on 127.0.0.1 only'), false, 'nothing had to move');
    // Switched on again, it returns to the address configured.
    const root2 = await signInAdmin(again.url('control'));
    assert.equal((await root2.put('/api/settings/tls/ports/app', { http: true })).status, 200);
    const door = again.gw.doors.find((d) => d.plane === 'data' && d.protocol === 'http');
    assert.match(String(door?.address), /^0\.0\.0\.0:\d+$/);
  } finally {
    await again?.gw.stop();
    await t.db.drop();
  }
});
