/**
 * The console's HTTPS door and the doors of other nodes (spec 1.2 rules 3, 24): binding first, the
 * live feed over wss, and a second node on the same PostgreSQL database that opens its door from
 * a placement made through the first, or says it cannot unseal the key.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import WebSocket from 'ws';
import { startTestGateway, ROOT_PASSWORD, type TestGateway } from '../helpers/gateway.ts';
import { signInAdmin, type Admin } from '../helpers/admin.ts';
import { TEST_DATABASE } from '../helpers/db.ts';
import { openSslKit, type OpenSslKit } from '../helpers/openssl.ts';
import { handshake, httpsCall, tcpProbe } from '../helpers/tls-client.ts';

/** Several nodes on one database is the PostgreSQL (cluster) mode: on SQLite this reports as skipped. */
const cluster = { skip: TEST_DATABASE === 'postgres' ? false : 'several nodes share one PostgreSQL database; the SQLite file serves one node' };

let t: TestGateway;
let root: Admin;
let kit: OpenSslKit;
let ca: string;
/** A plain TCP server holding the console's configured HTTPS port. */
let squatter: Server;
let consolePort: number;

before(async () => {
  squatter = createServer();
  await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
  consolePort = (squatter.address() as { port: number }).port;
  t = await startTestGateway({ GATEWAY_CLOCK: 'manual', GATEWAY_NODE_NAME: 'node-1', GATEWAY_ADMIN_TLS_ADDR: `127.0.0.1:${consolePort}` });
  root = await signInAdmin(t.url('control'));
  kit = openSslKit();
  ca = kit.authority().cert;
});

after(async () => {
  await t?.close();
  if (squatter?.listening) await new Promise((resolve) => squatter.close(resolve));
  kit?.remove();
});

function httpsPort(gw: TestGateway, plane: 'data' | 'control' | 'internal'): number | undefined {
  return gw.gw.doors.find((d) => d.plane === plane && d.protocol === 'https')?.port;
}

async function importLeaf(file: string, san: string): Promise<{ id: string; fingerprint: string }> {
  const leaf = kit.leaf(file, san);
  const a = await root.post('/api/certificates', { source: 'import', name: file, cert: leaf.cert, key: leaf.key });
  assert.equal(a.status, 201, a.text);
  return a.json;
}

/** The answer to an upgrade: the first message, or the refusal's status and body. */
function openFeed(port: number, headers: Record<string, string>, protocolVersion = 13): Promise<{ ws: WebSocket; first: Record<string, unknown> } | { status: number; type: string; body: string; version?: string }> {
  return new Promise((resolve, reject) => {
    // ws hands its options to tls.connect, the server name included (its types leave it out).
    const options: WebSocket.ClientOptions & { servername: string } = { headers, ca, servername: 'console.example.test', protocolVersion };
    const ws = new WebSocket(`wss://127.0.0.1:${port}/api/schedules/live`, options);
    ws.once('message', (data) => resolve({ ws, first: JSON.parse(String(data)) as Record<string, unknown> }));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => { body += c.toString('utf8'); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body, version: res.headers['sec-websocket-version'] as string | undefined }));
    });
    ws.once('error', reject);
  });
}

test('bind first: a console door that cannot bind refuses the placement and changes nothing', async () => {
  const cert = await importLeaf('console', 'DNS:console.example.test');
  const refused = await root.put(`/api/certificates/${cert.id}/placement`, { planes: ['console'] });
  assert.equal(refused.status, 409, refused.text);
  assert.equal(refused.json.code, 'tls.bind-failed');
  assert.match(refused.json.detail, new RegExp(`${consolePort}`));
  assert.match(refused.json.detail, /address in use/);
  const after = await root.get(`/api/certificates/${cert.id}`);
  assert.deepEqual(after.json.planes, [], 'the certificate is placed nowhere');
  assert.equal(httpsPort(t, 'control'), undefined, 'no console HTTPS door');
  const audit = await root.get('/api/audit?part=changes');
  assert.equal(audit.status, 200, audit.text);
  assert.deepEqual((audit.json.events as Array<{ action: string }>).filter((e) => e.action === 'certificate.place'), [], 'no placement was recorded');
  // Once the address is free, the same placement opens the door there.
  await new Promise((resolve) => squatter.close(resolve));
  const placed = await root.put(`/api/certificates/${cert.id}/placement`, { planes: ['console'] });
  assert.equal(placed.status, 200, placed.text);
  assert.equal(httpsPort(t, 'control'), consolePort);
});

test('the live feed works over wss through the console\'s HTTPS door; without a session it is a 401 problem', async () => {
  assert.equal(httpsPort(t, 'control'), consolePort, 'the previous test placed the console certificate');
  const origin = `https://127.0.0.1:${consolePort}`;
  const signIn = await httpsCall(consolePort, {
    method: 'POST', path: '/api/session', servername: 'console.example.test', host: '127.0.0.1', ca,
    headers: { 'content-type': 'application/json', origin }, body: JSON.stringify({ name: 'root', password: ROOT_PASSWORD }),
  });
  assert.equal(signIn.status, 200, signIn.body);
  assert.equal(signIn.presented?.authorized, true);
  const cookie = [signIn.headers['set-cookie'] ?? ''].flat()[0]!.split(';')[0]!;
  assert.match(cookie, /=/, 'a session cookie');

  const opened = await openFeed(consolePort, { cookie, origin });
  assert.ok('ws' in opened, JSON.stringify(opened));
  try {
    assert.equal(opened.first.type, 'hello');
    assert.ok(Array.isArray(opened.first.schedules));
  } finally {
    opened.ws.close();
  }

  const refused = await openFeed(consolePort, { origin });
  assert.ok('status' in refused, 'refused');
  assert.equal(refused.status, 401, refused.body);
  assert.match(refused.type, /application\/problem\+json/);
  assert.equal(JSON.parse(refused.body).code, 'unauthenticated');

  // Another version of the protocol is told the one spoken, before any credential is looked at.
  const older = await openFeed(consolePort, { cookie, origin }, 8);
  assert.ok('status' in older, 'refused');
  assert.deepEqual([older.status, JSON.parse(older.body).code, older.version], [426, 'upgrade-required', '13']);
});

test('a second node opens its HTTPS door from a placement made through the first; one with another vault key says it cannot unseal', cluster, async () => {
  const [second, stranger] = await Promise.all([
    startTestGateway({ GATEWAY_CLOCK: 'manual', GATEWAY_NODE_NAME: 'node-2' }, t.db),
    startTestGateway({ GATEWAY_CLOCK: 'manual', GATEWAY_NODE_NAME: 'node-3', GATEWAY_VAULT_KEY: randomBytes(32).toString('base64') }, t.db),
  ]);
  try {
    // The console certificate placed by the tests above opened the other nodes' console doors too.
    assert.ok(httpsPort(second, 'control') !== undefined, 'node 2 opened its console door at start');
    assert.equal(httpsPort(stranger, 'control'), undefined, 'node 3 cannot present a key it cannot unseal');

    const app = await importLeaf('cluster', 'DNS:cluster.example.test');
    const placed = await root.put(`/api/certificates/${app.id}/placement`, { planes: ['app'] });
    assert.equal(placed.status, 200, placed.text);
    let port: number | undefined;
    for (let i = 0; i < 100 && port === undefined; i++) {
      port = httpsPort(second, 'data');
      if (port === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.ok(port !== undefined, 'node 2 opened its data plane\'s HTTPS door within 5 s');
    const h = await handshake(port, { servername: 'cluster.example.test', ca });
    assert.ok(h.ok && h.cert.authorized, h.ok ? h.cert.authorizationError : h.error);
    assert.equal(h.cert.fingerprint, app.fingerprint);
    const healthz = await httpsCall(port, { path: '/healthz', servername: 'cluster.example.test', ca });
    assert.equal(healthz.status, 200);

    const third = await signInAdmin(stranger.url('control'));
    let record: { state: string; detail: string | null } | undefined;
    for (let i = 0; i < 100 && record?.state !== 'unsealable'; i++) {
      const list = await third.get('/api/certificates');
      record = (list.json.certificates as Array<{ id: string; state: string; detail: string | null }>).find((c) => c.id === app.id);
      if (record?.state !== 'unsealable') await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(record?.state, 'unsealable', JSON.stringify(record));
    assert.match(record?.detail ?? '', /cannot be unsealed/);
    assert.match(record?.detail ?? '', /GATEWAY_VAULT_KEY/);
    assert.equal(httpsPort(stranger, 'data'), undefined, 'node 3 opens no door for it');
    assert.ok(stranger.logs.some((l) => l.msg === 'a placed certificate cannot be presented on this node'), 'node 3 said so in its log');
    // The first node still serves it.
    assert.equal((await handshake(httpsPort(t, 'data')!, { servername: 'cluster.example.test' })).ok, true);
  } finally {
    await Promise.all([second.close(), stranger.close()]);
  }
});

test('nothing placed on a node: its HTTPS addresses refuse connections', async () => {
  const del = await root.get('/api/certificates');
  for (const c of del.json.certificates as Array<{ id: string }>) {
    const r = await root.del(`/api/certificates/${c.id}`);
    // The console's last certificate stays while the console is used over HTTPS (spec 1.2 rule 7).
    if (r.status === 409) {
      assert.equal(r.json.code, 'tls.last-certificate', r.text);
      await root.post('/__clock/advance', { by: 'PT31S' });
      assert.equal((await root.del(`/api/certificates/${c.id}`)).status, 204);
    } else {
      assert.equal(r.status, 204, r.text);
    }
  }
  assert.equal(httpsPort(t, 'control'), undefined);
  assert.equal(await tcpProbe(consolePort), 'refused');
});
