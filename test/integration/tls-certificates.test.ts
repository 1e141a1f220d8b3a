/**
 * The certificate store through the control plane, with material made by the openssl command line
 * (spec 1.2 rules 1-2, 20; 2.5; CONTRACT.md "TLS"): import with a chain, self-signed, a signing
 * request answered by an openssl authority, file-system certificates re-read on the test clock,
 * the audit lines and the capability. Key material never appears in an answer, the trail or a log.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { signInAdmin, type Admin } from '../helpers/admin.ts';
import { call, type Answer } from '../helpers/http.ts';
import { refused } from '../helpers/refused.ts';
import { presented } from '../helpers/https.ts';
import { openSslKit, type OpenSslKit } from '../helpers/openssl.ts';

let t: TestGateway;
let root: Admin;
let kit: OpenSslKit;
let files: string;
/** Every answer the tests received, searched for key material at the end. */
const answers: string[] = [];

/** An admin whose answers are all kept. */
function recorded(admin: Admin): Admin {
  const keep = (go: (path: string, body?: unknown) => Promise<Answer>) => async (path: string, body?: unknown) => {
    const a = await go(path, body);
    answers.push(a.text);
    return a;
  };
  return { ...admin, get: keep(admin.get), put: keep(admin.put), post: keep(admin.post), patch: keep(admin.patch), del: keep(admin.del) };
}

/** openssl's SHA-256 fingerprint of a PEM certificate file in the kit's folder. */
function opensslFingerprint(file: string): string {
  return kit.run('x509', '-in', file, '-noout', '-fingerprint', '-sha256').trim().replace(/^.*Fingerprint=/i, '');
}

/** A CA in the kit that `kit.leaf` signs with, itself signed by a root: leaves come with a chain. */
function intermediate(): { pem: string } {
  kit.authority('Meerkat Test Root');
  kit.write('root.pem', kit.read('ca.pem'));
  kit.write('root-key.pem', kit.read('ca-key.pem'));
  kit.run('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', 'inter-key.pem');
  kit.run('req', '-new', '-key', 'inter-key.pem', '-out', 'inter.csr', '-subj', '/O=Meerkat Tests/CN=Meerkat Test Intermediate');
  kit.write('inter.ext', 'basicConstraints=critical,CA:true,pathlen:0\nkeyUsage=critical,keyCertSign,cRLSign\n');
  kit.run('x509', '-req', '-in', 'inter.csr', '-CA', 'root.pem', '-CAkey', 'root-key.pem', '-CAcreateserial', '-out', 'inter.pem', '-days', '30', '-extfile', 'inter.ext');
  kit.write('ca.pem', kit.read('inter.pem'));
  kit.write('ca-key.pem', kit.read('inter-key.pem'));
  return { pem: kit.read('inter.pem') };
}

const advance = (by: string) => call(`${t.url('control')}/__clock/advance`, { method: 'POST', body: { by } });

/** Polls briefly for what the file re-read does after the clock moved (its work ends after the answer). */
async function until<T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  let last: T | undefined;
  for (let i = 0; i < 100; i++) {
    last = await read();
    if (ok(last)) return last;
    await sleep(50);
  }
  assert.fail(`${what}: still ${JSON.stringify(last)}`);
}

/** A pair written under the mount (`<file>.crt`, `<file>.key`) and stored as a file-system certificate. */
async function mounted(file: string, leaf: string, san: string): Promise<{ certPath: string; keyPath: string; a: Answer }> {
  const certPath = join(files, `${file}.crt`);
  const keyPath = join(files, `${file}.key`);
  const pair = kit.leaf(leaf, san);
  writeFileSync(certPath, pair.cert);
  writeFileSync(keyPath, pair.key);
  const a = await root.post('/api/certificates', { source: 'file', certPath, keyPath });
  assert.equal(a.status, 201, a.text);
  return { certPath, keyPath, a };
}

function dataHttpsPort(): number {
  const door = t.gw.doors.find((d) => d.plane === 'data' && d.protocol === 'https');
  assert.ok(door, 'the data plane has an HTTPS door');
  return door.port;
}

before(async () => {
  t = await startTestGateway({ GATEWAY_CLOCK: 'manual' });
  root = recorded(await signInAdmin(t.url('control')));
  kit = openSslKit();
  intermediate();
  files = mkdtempSync(join(tmpdir(), 'meerkat-mounted-'));
});
after(async () => {
  kit?.remove();
  if (files) rmSync(files, { recursive: true, force: true });
  await t?.close();
});

test('import: a leaf with its chain and key; a key of another certificate, an encrypted key and garbage are refused', async () => {
  const leaf = kit.leaf('imported', 'DNS:import.example.test,DNS:www.import.example.test', { days: 20 });
  const a = await root.post('/api/certificates', { source: 'import', cert: leaf.cert + kit.read('inter.pem'), key: leaf.key });
  assert.equal(a.status, 201, a.text);
  assert.deepEqual([...a.json.names].sort(), ['import.example.test', 'www.import.example.test']);
  assert.match(a.json.issuer, /Meerkat Test Intermediate/);
  assert.equal(a.json.source, 'import');
  assert.equal(a.json.state, 'active');
  assert.deepEqual(a.json.planes, []);
  assert.equal(a.json.fingerprint, opensslFingerprint('imported.pem'));
  const notAfter = Date.parse(kit.run('x509', '-in', 'imported.pem', '-noout', '-enddate').trim().replace(/^notAfter=/, '')) / 1000;
  assert.equal(a.json.notAfter, notAfter);
  assert.ok(Math.abs(a.json.expiresIn - 20 * 86_400) < 3600, `expiresIn ${a.json.expiresIn} is about 20 days`);
  assert.equal((await root.get(`/api/certificates/${a.json.id}`)).json.fingerprint, a.json.fingerprint);

  const other = kit.leaf('other', 'DNS:other.example.test');
  refused(await root.post('/api/certificates', { source: 'import', cert: leaf.cert, key: other.key }), 400, 'tls.key-mismatch', 'a key of another certificate');
  kit.run('pkcs8', '-topk8', '-in', 'imported-key.pem', '-out', 'encrypted-key.pem', '-passout', 'pass:a-passphrase');
  refused(await root.post('/api/certificates', { source: 'import', cert: leaf.cert, key: kit.read('encrypted-key.pem') }), 400, 'tls.key-invalid', 'an encrypted key');
  refused(await root.post('/api/certificates', { source: 'import', cert: 'not a certificate', key: leaf.key }), 400, 'tls.certificate-invalid', 'garbage');
});

/** The subjects of the certificates a door sends, in the order it sends them (openssl s_client -showcerts). */
async function servedChain(port: number, servername: string): Promise<string[]> {
  // Not execFileSync: the gateway under test answers on this thread's event loop.
  const child = spawn('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, '-servername', servername, '-showcerts'], { stdio: ['pipe', 'pipe', 'ignore'] });
  child.stdin.end();
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => { out += d; });
  await once(child, 'close');
  return [...out.matchAll(/^ *\d+ s:(.*)$/gm)].map((m) => m[1]!.trim());
}

test('import: a bundle in another order is stored and served leaf first; a certificate outside the chain is refused', async () => {
  const leaf = kit.leaf('reordered', 'DNS:reordered.example.test');
  // Root first, as some authorities' bundles come, and the intermediate given twice.
  const bundle = kit.read('root.pem') + kit.read('inter.pem') + kit.read('inter.pem') + leaf.cert;
  const a = await root.post('/api/certificates', { source: 'import', cert: bundle, key: leaf.key });
  assert.equal(a.status, 201, a.text);
  assert.deepEqual(a.json.names, ['reordered.example.test']);
  assert.equal(a.json.fingerprint, opensslFingerprint('reordered.pem'));
  assert.match(a.json.issuer, /Meerkat Test Intermediate/);
  assert.equal((await root.put(`/api/certificates/${a.json.id}/placement`, { planes: ['app'] })).status, 200);
  const served = await servedChain(dataHttpsPort(), 'reordered.example.test');
  assert.equal(served.length, 3, served.join(' | '));
  assert.match(served[0]!, /CN ?= ?reordered/);
  assert.match(served[1]!, /Meerkat Test Intermediate/);
  assert.match(served[2]!, /Meerkat Test Root/);
  assert.equal((await root.put(`/api/certificates/${a.json.id}/placement`, { planes: [] })).status, 200);
  assert.equal((await root.del(`/api/certificates/${a.json.id}`)).status, 204);

  // Another site's leaf pasted with the chain: refused, its place named, nothing stored.
  const stranger = kit.leaf('stranger', 'DNS:stranger.example.test');
  const before = (await root.get('/api/certificates')).json.certificates.length;
  const r = await root.post('/api/certificates', { source: 'import', cert: leaf.cert + kit.read('inter.pem') + stranger.cert, key: leaf.key });
  refused(r, 400, 'tls.chain-invalid', 'a certificate outside the chain');
  assert.match(r.json.detail, /Certificate 3 of 3 \(stranger\)/);
  assert.equal(r.json.field, 'cert');
  assert.equal((await root.get('/api/certificates')).json.certificates.length, before);
});

test('self-signed: host names, a wildcard and an IP address; a name that is none is refused', async () => {
  const a = await root.post('/api/certificates', { source: 'self-signed', names: ['self.example.test', '*.apps.example.test', '10.1.2.3'], days: 7 });
  assert.equal(a.status, 201, a.text);
  assert.deepEqual([...a.json.names].sort(), ['*.apps.example.test', '10.1.2.3', 'self.example.test']);
  assert.equal(a.json.source, 'self-signed');
  assert.ok(Math.abs(a.json.expiresIn - 7 * 86_400) < 3600, String(a.json.expiresIn));
  for (const bad of ['https://x.example.test', 'a b.example.test', '*.*.example.test']) {
    refused(await root.post('/api/certificates', { source: 'self-signed', names: [bad] }), 400, 'tls.name-invalid', bad);
  }
});

test('signing request: pending and downloadable again; only the answer for its key is adopted, then it is placed', async () => {
  const a = await root.post('/api/certificates', { source: 'csr', names: ['signed.example.test'] });
  assert.equal(a.status, 201, a.text);
  assert.equal(a.json.state, 'pending');
  assert.deepEqual(a.json.planes, []);
  const id: string = a.json.id;
  // Names listed as the request carries them, once each, in lower case.
  const mixed = await root.post('/api/certificates', { source: 'csr', names: ['Shop.Test', 'shop.test', '10.0.0.1'] });
  assert.equal(mixed.status, 201, mixed.text);
  assert.deepEqual(mixed.json.names, ['shop.test', '10.0.0.1']);
  assert.equal(mixed.json.name, 'shop.test');
  assert.equal((await root.del(`/api/certificates/${mixed.json.id}`)).status, 204);
  const first = await root.get(`/api/certificates/${id}/csr`);
  assert.equal(first.status, 200, first.text);
  assert.match(first.text, /-----BEGIN CERTIFICATE REQUEST-----/);
  assert.equal((await root.get(`/api/certificates/${id}/csr`)).text, first.text, 'the same request, downloaded again');
  refused(await root.put(`/api/certificates/${id}/placement`, { planes: ['app'] }), 409, 'tls.not-servable', 'a pending request serves nothing');

  kit.write('asked.csr', first.text);
  kit.write('asked.ext', 'basicConstraints=CA:false\nsubjectAltName=DNS:signed.example.test\n');
  kit.run('x509', '-req', '-in', 'asked.csr', '-CA', 'ca.pem', '-CAkey', 'ca-key.pem', '-CAcreateserial', '-out', 'answer.pem', '-days', '5', '-extfile', 'asked.ext');
  const stranger = kit.leaf('stranger', 'DNS:signed.example.test');
  refused(await root.post(`/api/certificates/${id}/answer`, { cert: stranger.cert }), 400, 'tls.answer-mismatch', 'an answer for another key');
  const adopted = await root.post(`/api/certificates/${id}/answer`, { cert: kit.read('answer.pem') + kit.read('inter.pem') });
  assert.equal(adopted.status, 200, adopted.text);
  assert.equal(adopted.json.state, 'active');
  assert.deepEqual(adopted.json.names, ['signed.example.test']);
  assert.equal(adopted.json.fingerprint, opensslFingerprint('answer.pem'));
  const placed = await root.put(`/api/certificates/${id}/placement`, { planes: ['app'] });
  assert.equal(placed.status, 200, placed.text);
  assert.deepEqual(placed.json.planes, ['app']);
  assert.equal((await presented(dataHttpsPort(), 'signed.example.test')).fingerprint256, adopted.json.fingerprint);
});

test('file system: paths only, exclusions refused, the pair re-read every 30 s without restart, a vanished pair is missing (rule 20)', async () => {
  const { certPath, keyPath, a } = await mounted('tls', 'mounted', 'DNS:files.example.test');
  assert.deepEqual(a.json.paths, { cert: certPath, key: keyPath });
  assert.doesNotMatch(a.text, /BEGIN/, 'no file content in the record');
  const id: string = a.json.id;

  const inData = await root.post('/api/certificates', { source: 'file', certPath: join(t.db.dataDir, 'tls.crt'), keyPath });
  refused(inData, 400, 'field.invalid', 'a path in the data directory');
  assert.equal(inData.json.field, 'certPath');
  assert.match(inData.json.detail, /data directory/);
  const proc = await root.post('/api/certificates', { source: 'file', certPath, keyPath: '/proc/self/environ' });
  refused(proc, 400, 'field.invalid', 'a path under /proc');
  assert.equal(proc.json.field, 'keyPath');
  assert.match(proc.json.detail, /\/proc/);

  assert.equal((await root.put(`/api/certificates/${id}/placement`, { planes: ['app'] })).status, 200);
  const port = dataHttpsPort();
  assert.equal((await presented(port, 'files.example.test')).fingerprint256, a.json.fingerprint);

  // The runtime renews the pair in place.
  const renewed = kit.leaf('renewed', 'DNS:files.example.test,DNS:renewed.example.test');
  writeFileSync(certPath, renewed.cert);
  writeFileSync(keyPath, renewed.key);
  const fingerprint = opensslFingerprint('renewed.pem');
  assert.notEqual(fingerprint, a.json.fingerprint);
  assert.equal((await advance('PT30S')).status, 200);
  await until('the new certificate presented', () => presented(port, 'files.example.test').then((p) => p.fingerprint256), (f) => f === fingerprint);
  const record = (await root.get(`/api/certificates/${id}`)).json;
  assert.equal(record.fingerprint, fingerprint);
  assert.deepEqual([...record.names].sort(), ['files.example.test', 'renewed.example.test']);

  // A renewal written one file at a time: while the files disagree, the last pair read is presented.
  const third = kit.leaf('third', 'DNS:files.example.test,DNS:third.example.test');
  writeFileSync(certPath, third.cert);
  assert.equal((await advance('PT30S')).status, 200);
  const half = await until('the record says the files disagree', () => root.get(`/api/certificates/${id}`), (r) => /make no pair now/.test(String(r.json.detail)));
  assert.equal(half.json.state, 'active');
  assert.equal((await presented(port, 'files.example.test')).fingerprint256, fingerprint, 'still the last pair read');
  writeFileSync(keyPath, third.key);
  const thirdPrint = opensslFingerprint('third.pem');
  assert.equal((await advance('PT30S')).status, 200);
  await until('the third certificate presented', () => presented(port, 'files.example.test').then((p) => p.fingerprint256), (f) => f === thirdPrint);
  assert.equal((await root.get(`/api/certificates/${id}`)).json.detail, null, 'a pair again');

  // A new pair on disk is presented once the 30-s read stored what it says: a change in between
  // (another certificate made) still presents the pair the stored names describe.
  const fourth = kit.leaf('fourth', 'DNS:fourth.example.test');
  writeFileSync(certPath, fourth.cert);
  writeFileSync(keyPath, fourth.key);
  assert.equal((await root.post('/api/certificates', { source: 'self-signed', names: ['unrelated.example.test'] })).status, 201);
  const waiting = await until('the record says the files hold another certificate', () => root.get(`/api/certificates/${id}`), (r) => /another certificate/.test(String(r.json.detail)));
  assert.deepEqual([...waiting.json.names].sort(), ['files.example.test', 'third.example.test']);
  assert.equal((await presented(port, 'files.example.test')).fingerprint256, thirdPrint, 'the pair the stored names describe');
  const fourthPrint = opensslFingerprint('fourth.pem');
  assert.equal((await advance('PT30S')).status, 200);
  await until('the fourth certificate presented', () => presented(port, 'fourth.example.test').then((p) => p.fingerprint256), (f) => f === fourthPrint);

  rmSync(certPath);
  rmSync(keyPath);
  assert.equal((await advance('PT30S')).status, 200);
  const gone = await until('the record says missing', () => root.get(`/api/certificates/${id}`), (r) => r.json.state === 'missing');
  assert.equal(gone.json.fingerprint, fourthPrint, 'the last certificate read is kept');
  assert.equal((await root.put(`/api/certificates/${id}/placement`, { planes: [] })).status, 200);
});

test('file system: a renewal on disk that would answer a name another placed certificate answers is held back, the last pair presented (rule 10)', async () => {
  const { certPath, keyPath, a } = await mounted('held', 'held', 'DNS:held.example.test');
  const id: string = a.json.id;
  assert.equal((await root.put(`/api/certificates/${id}/placement`, { planes: ['app'] })).status, 200);
  const other = await root.post('/api/certificates', { source: 'self-signed', names: ['taken.example.test'], name: 'the other one' });
  assert.equal(other.status, 201, other.text);
  assert.equal((await root.put(`/api/certificates/${other.json.id}/placement`, { planes: ['app'] })).status, 200);
  const port = dataHttpsPort();

  // Renewed on disk with a name the other certificate answers on the same plane.
  const renewal = kit.leaf('held-renewal', 'DNS:held.example.test,DNS:taken.example.test');
  writeFileSync(certPath, renewal.cert);
  writeFileSync(keyPath, renewal.key);
  assert.equal((await advance('PT30S')).status, 200);
  const held = await until('the record says the renewal is held back', () => root.get(`/api/certificates/${id}`), (r) => /placement rule/.test(String(r.json.detail)));
  assert.equal(held.json.state, 'active');
  assert.match(held.json.detail, /"the other one" already answers taken\.example\.test/);
  assert.equal(held.json.fingerprint, a.json.fingerprint, 'the renewal is not stored');
  assert.deepEqual(held.json.names, ['held.example.test']);
  assert.equal((await presented(port, 'held.example.test')).fingerprint256, a.json.fingerprint, 'the last pair read');
  assert.equal((await presented(port, 'taken.example.test')).fingerprint256, other.json.fingerprint, 'the name stays the other certificate\'s');

  // Another read finds the same: nothing changes and nothing is said twice.
  assert.equal((await advance('PT30S')).status, 200);
  assert.equal((await root.get(`/api/certificates/${id}`)).json.fingerprint, a.json.fingerprint);

  // Once the other certificate leaves the plane, the next read takes the renewal.
  assert.equal((await root.put(`/api/certificates/${other.json.id}/placement`, { planes: [] })).status, 200);
  assert.equal((await advance('PT30S')).status, 200);
  const renewedPrint = opensslFingerprint('held-renewal.pem');
  const taken = await until('the renewal stored', () => root.get(`/api/certificates/${id}`), (r) => r.json.fingerprint === renewedPrint);
  assert.equal(taken.json.detail, null);
  assert.deepEqual([...taken.json.names].sort(), ['held.example.test', 'taken.example.test']);
  await until('the renewal presented', () => presented(port, 'taken.example.test').then((p) => p.fingerprint256), (f) => f === renewedPrint);
  assert.equal((await root.put(`/api/certificates/${id}/placement`, { planes: [] })).status, 200);
});

test('file system: a link is judged by where it leads; a FIFO, a device or an oversized file is refused at once', async () => {
  const pair = kit.leaf('linked', 'DNS:linked.example.test');
  const certPath = join(files, 'linked.crt');
  writeFileSync(certPath, pair.cert);
  writeFileSync(join(files, 'linked.key'), pair.key);

  // A link into the data directory, or to a process file, is the file it leads to.
  const intoData = join(files, 'vault-link.key');
  symlinkSync(join(t.db.dataDir, 'vault.key'), intoData);
  const a = await root.post('/api/certificates', { source: 'file', certPath, keyPath: intoData });
  refused(a, 400, 'field.invalid', 'a link into the data directory');
  assert.match(a.json.detail, /leads to .*data directory/);
  const toProc = join(files, 'mounts-link.crt');
  symlinkSync('/proc/self/mounts', toProc);
  refused(await root.post('/api/certificates', { source: 'file', certPath: toProc, keyPath: join(files, 'linked.key') }), 400, 'field.invalid', 'a link to /proc');

  // A FIFO would hold the certificate actor until someone wrote to it; a device never ends.
  const fifo = join(files, 'fifo.key');
  execFileSync('mkfifo', [fifo]);
  const f = await root.post('/api/certificates', { source: 'file', certPath, keyPath: fifo });
  refused(f, 400, 'tls.file-unreadable', 'a FIFO');
  assert.match(f.json.detail, /not a regular file/);
  const zero = join(files, 'zero-link.crt');
  symlinkSync('/dev/zero', zero);
  refused(await root.post('/api/certificates', { source: 'file', certPath: zero, keyPath: join(files, 'linked.key') }), 400, 'field.invalid', 'a link to /dev');
  const big = join(files, 'big.crt');
  writeFileSync(big, pair.cert + 'x'.repeat(300 * 1024));
  const b = await root.post('/api/certificates', { source: 'file', certPath: big, keyPath: join(files, 'linked.key') });
  refused(b, 400, 'tls.file-unreadable', 'a file larger than a certificate is');
  assert.match(b.json.detail, /larger than 256 KB/);
  assert.equal((await root.get('/api/settings/tls')).status, 200, 'the certificate actor still answers');
});

test('mounts: a list of candidates, never under the data directory or /proc', async () => {
  const a = await root.get('/api/certificates/mounts');
  assert.equal(a.status, 200, a.text);
  assert.ok(Array.isArray(a.json.mounts));
  for (const m of a.json.mounts) {
    assert.equal(typeof m.mount, 'string');
    assert.equal(typeof m.certPath, 'string');
    assert.ok(m.keyPath === null || typeof m.keyPath === 'string');
    assert.equal(m.pickable, m.keyPath !== null);
    assert.ok(Array.isArray(m.names));
    for (const p of [m.certPath, m.keyPath].filter((x): x is string => x !== null)) {
      assert.ok(!p.startsWith(`${t.db.dataDir}/`) && !p.startsWith('/proc/'), p);
    }
  }
  assert.doesNotMatch(a.text, /BEGIN/);
});

test('capability: infra-admin manages certificates, other administrators are refused; the trail names the caller', async () => {
  for (const [name, capabilities] of [['infra', ['infra-admin']], ['apps', ['app-admin']]] as const) {
    const made = await root.post('/api/accounts', { name, password: `${name}-password-1`, capabilities });
    assert.equal(made.status, 201, made.text);
  }
  const apps = recorded(await signInAdmin(t.url('control'), 'apps', 'apps-password-1'));
  refused(await apps.get('/api/certificates'), 403, 'capability', 'app-admin lists certificates');
  refused(await apps.post('/api/certificates', { source: 'self-signed', names: ['x.example.test'] }), 403, 'capability', 'app-admin adds one');

  const infra = recorded(await signInAdmin(t.url('control'), 'infra', 'infra-password-1'));
  assert.equal((await infra.get('/api/certificates')).status, 200);
  const made = await infra.post('/api/certificates', { source: 'self-signed', names: ['audited.example.test'] });
  assert.equal(made.status, 201, made.text);
  const id: string = made.json.id;
  assert.equal((await infra.put(`/api/certificates/${id}/placement`, { planes: ['app'] })).status, 200);
  assert.equal((await infra.del(`/api/certificates/${id}`)).status, 204);

  await t.gw.ctx.audit.call('audit.settle', null);
  const trail = await root.get(`/api/audit?target=${id}`);
  assert.equal(trail.status, 200, trail.text);
  const byAction = new Map<string, any>(trail.json.events.map((e: any) => [e.action, e]));
  for (const action of ['certificate.create', 'certificate.place', 'certificate.delete']) {
    const line = byAction.get(action);
    assert.ok(line, `${action} in ${JSON.stringify(trail.json.events.map((e: any) => e.action))}`);
    assert.deepEqual(line.actor, { account: 'infra' }, action);
    assert.equal(line.target.kind, 'certificate', action);
  }
  assert.deepEqual(byAction.get('certificate.place').changes, [{ field: 'planes', from: [], to: ['app'] }]);
});

test('no answer, audit line or log line ever carries a private key', async () => {
  await t.gw.ctx.audit.call('audit.settle', null);
  assert.deepEqual((await root.get(`/api/audit?q=${encodeURIComponent('PRIVATE KEY')}`)).json.events, []);
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page: Answer = await root.get(`/api/audit?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    assert.equal(page.status, 200, page.text);
    assert.doesNotMatch(page.text, /PRIVATE KEY/);
    cursor = page.json.next;
    pages++;
  } while (cursor !== null && pages < 50);
  assert.ok(answers.length > 20, `${answers.length} answers kept`);
  for (const text of answers) assert.doesNotMatch(text, /PRIVATE KEY/);
  for (const line of t.logs) assert.doesNotMatch(JSON.stringify(line), /PRIVATE KEY/, line.msg);
});

