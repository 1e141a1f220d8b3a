/**
 * ACME issuance end to end (spec 1.2 rule 19, 2.5 "ACME authority") against a real authority:
 * Pebble on loopback, validating HTTP-01 against a node:http server and TLS-ALPN-01 against a
 * node:tls server, both answering from one AcmeChallenges board, as the gateway's doors will.
 * Needs no gateway and no database, so it runs the same whatever MEERKAT_TEST_DATABASE says.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { connect, createSecureContext, createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { AcmeChallenges, ACME_TLS_ALPN, http01Token } from '../../src/core/tls/acme-challenges.ts';
import { issueCertificate, newAccountKey, type AcmeIssueOptions, type AcmeIssued } from '../../src/actors/certs/sources/acme.ts';
import { GatewayError } from '../../src/http/errors.ts';
import acme from 'acme-client';
import { startPebble, type Pebble } from '../helpers/pebble.ts';

const NAMES = ['one.http.test', 'two.http.test', 'one.alpn.test', 'two.alpn.test', 'eab.test', 'eab-wrong.test', 'eab-none.test', 'both-a.test', 'both-b.test'];
const EAB = { kid: 'kid-1', hmacKey: 'zWNDZM6eQGHWpSRTPal5eIUYFTu7EajVIoguysqZ9wG44nMEtx3MUAsUDkMTQ12W' };

const challenges = new AcmeChallenges();
const seen = { http: [] as string[], alpn: [] as string[] };
let httpServer: HttpServer;
let tlsServer: TlsServer;
let pebble: Pebble;
let pebbleEab: Pebble;

before(async () => {
  httpServer = createHttpServer((req, res) => {
    const token = http01Token(req.url ?? '');
    const answer = token === undefined ? undefined : challenges.http01(token);
    seen.http.push(`${req.headers.host?.split(':')[0]} ${answer === undefined ? 404 : 200}`);
    res.writeHead(answer === undefined ? 404 : 200, { 'content-type': 'text/plain' }).end(answer ?? '');
  });
  // This port serves acme-tls/1 only, so the certificate can be chosen by name alone.
  tlsServer = createTlsServer({
    ALPNProtocols: [ACME_TLS_ALPN],
    SNICallback: (name, cb) => {
      const answer = challenges.alpn01(name);
      seen.alpn.push(`${name} ${answer === undefined ? 'none' : 'answered'}`);
      if (answer === undefined) cb(new Error(`no acme-tls/1 answer for ${name}`));
      else cb(null, createSecureContext({ cert: answer.cert, key: answer.key }));
    },
  });
  tlsServer.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve));
  const ports = { httpPort: (httpServer.address() as AddressInfo).port, tlsPort: (tlsServer.address() as AddressInfo).port };
  [pebble, pebbleEab] = await Promise.all([
    startPebble({ ...ports, names: NAMES }),
    startPebble({ ...ports, names: NAMES, eab: { [EAB.kid]: EAB.hmacKey } }),
  ]);
});

after(async () => {
  await Promise.all([pebble?.stop(), pebbleEab?.stop()]);
  httpServer?.close();
  tlsServer?.close();
});

function options(p: Pebble, o: Partial<AcmeIssueOptions> & { names: string[] }): AcmeIssueOptions & { events: string[] } {
  const events: string[] = [];
  return {
    directory: p.directory,
    rootCa: p.rootCa,
    termsAccepted: true,
    email: 'ops@example.test',
    challenges,
    log: (msg, attrs) => events.push(`${msg} ${String(attrs.name ?? '')} ${String(attrs.challenge ?? '')}`.trim()),
    events,
    ...o,
  };
}

/** The certificate carries the names, chains to Pebble's issuing root, and its key is the one given. */
async function assertIssued(p: Pebble, issued: AcmeIssued, names: string[]): Promise<void> {
  const chain = issued.cert.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g) ?? [];
  assert.ok(chain.length >= 2, 'the chain holds the leaf and its intermediate');
  const [leaf, ...rest] = chain.map((pem) => new X509Certificate(pem));
  const root = new X509Certificate(await p.issuerRoots());
  const sans = leaf!.subjectAltName?.split(', ').sort();
  assert.deepEqual(sans, names.map((n) => `DNS:${n}`).sort());
  let child = leaf!;
  for (const issuer of [...rest, root]) {
    assert.ok(child.checkIssued(issuer) && child.verify(issuer.publicKey), `${child.subject} is signed by ${issuer.subject}`);
    child = issuer;
  }
  const key = createPrivateKey(issued.key);
  assert.equal(key.asymmetricKeyDetails?.namedCurve, 'prime256v1');
  assert.ok(leaf!.checkPrivateKey(key), 'the key is the certificate\'s');
  assert.match(issued.accountUrl, /^https:\/\/127\.0\.0\.1:\d+\//);
  assert.ok(createPrivateKey(issued.accountKey));
  // And a real client trusting only Pebble's root accepts it for each name.
  const server = createTlsServer({ cert: issued.cert, key: issued.key });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    for (const servername of names) {
      await new Promise<void>((resolve, reject) => {
        const socket = connect({ port: (server.address() as AddressInfo).port, host: '127.0.0.1', servername, ca: root.toString() }, () => {
          socket.end();
          resolve();
        });
        socket.on('error', reject);
      });
    }
  } finally {
    server.close();
  }
}

async function refusal(promise: Promise<unknown>): Promise<GatewayError> {
  const err = await promise.then(() => assert.fail('issued, expected a refusal'), (e: unknown) => e);
  assert.ok(err instanceof GatewayError, `a GatewayError, got ${String(err)}`);
  return err;
}

let firstAccount: AcmeIssued | undefined;

test('HTTP-01: two names, answered on the plain door\'s path; the answers are taken down after', async (t) => {
  const o = options(pebble, { names: ['one.http.test', 'Two.Http.Test'] });
  const started = performance.now();
  firstAccount = await issueCertificate(o);
  t.diagnostic(`one issuance, two names, HTTP-01: ${Math.round(performance.now() - started)} ms`);
  await assertIssued(pebble, firstAccount, ['one.http.test', 'two.http.test']);
  assert.deepEqual(o.events.filter((e) => e.startsWith('acme challenge valid')).sort(),
    ['acme challenge valid one.http.test http-01', 'acme challenge valid two.http.test http-01']);
  assert.ok(seen.http.includes('one.http.test 200') && seen.http.includes('two.http.test 200'));
  assert.equal(challenges.size, 0);
});

test('TLS-ALPN-01 when preferred and offered; an account key given is the account kept', async (t) => {
  assert.ok(firstAccount);
  // No e-mail this time: the existing account's update then clears its contact (an empty update is refused).
  const o = options(pebble, { names: ['one.alpn.test', 'two.alpn.test'], preferred: 'tls-alpn-01', accountKey: firstAccount.accountKey, email: undefined });
  const started = performance.now();
  const issued = await issueCertificate(o);
  t.diagnostic(`one issuance, two names, TLS-ALPN-01: ${Math.round(performance.now() - started)} ms`);
  await assertIssued(pebble, issued, ['one.alpn.test', 'two.alpn.test']);
  assert.equal(issued.accountUrl, firstAccount.accountUrl);
  assert.equal(issued.accountKey, firstAccount.accountKey);
  assert.deepEqual(o.events.filter((e) => e.startsWith('acme challenge valid')).sort(),
    ['acme challenge valid one.alpn.test tls-alpn-01', 'acme challenge valid two.alpn.test tls-alpn-01']);
  assert.ok(seen.alpn.includes('one.alpn.test answered') && seen.alpn.includes('two.alpn.test answered'));
  assert.ok(!seen.http.some((h) => h.includes('alpn.test')), 'no HTTP-01 request for these names');
  assert.equal(challenges.size, 0);
});

test('EAB: the right key opens an account; a wrong HMAC or none is refused with the authority\'s reason', async (t) => {
  const issued = await issueCertificate(options(pebbleEab, { names: ['eab.test'], eab: EAB }));
  await assertIssued(pebbleEab, issued, ['eab.test']);

  const wrong = await refusal(issueCertificate(options(pebbleEab, {
    names: ['eab-wrong.test'], eab: { kid: EAB.kid, hmacKey: Buffer.from('not the key of kid-1, at all!!').toString('base64url') },
  })));
  assert.equal(wrong.code, 'acme.refused');
  assert.equal(wrong.status, 502);
  t.diagnostic(wrong.detail);
  assert.match(wrong.detail, /^The ACME authority refused: .*(binding|signature|HMAC|verif)/i);

  const none = await refusal(issueCertificate(options(pebbleEab, { names: ['eab-none.test'] })));
  assert.equal(none.code, 'acme.refused');
  assert.match(none.detail, /externalAccountBinding/);
});

test('two issuances at once, each trusting its own authority\'s root CA; nothing set for the process', async () => {
  // Each Pebble's HTTPS certificate comes from a CA of its own: a trust crossing over would fail.
  const [a, b] = await Promise.all([
    issueCertificate(options(pebble, { names: ['both-a.test'] })),
    issueCertificate(options(pebbleEab, { names: ['both-b.test'], eab: EAB })),
  ]);
  await assertIssued(pebble, a, ['both-a.test']);
  await assertIssued(pebbleEab, b, ['both-b.test']);
  assert.equal(acme.axios.defaults.httpsAgent, undefined);
});

test('a name the authority cannot reach is refused, naming the name, the challenge and the reason', async (t) => {
  const err = await refusal(issueCertificate(options(pebble, { names: ['one.http.test', 'nowhere.test'], accountKey: await newAccountKey() })));
  assert.equal(err.code, 'acme.refused');
  t.diagnostic(err.detail);
  assert.match(err.detail, /^The ACME authority refused nowhere\.test \(http-01\): ./);
  assert.equal(challenges.size, 0, 'every answer taken down, the failed name\'s and the other\'s');
});

test('an authority not reached: its HTTPS certificate not trusted, or nothing listening', async (t) => {
  // acme-client retries a request that got no answer 5 times, 75 s in all: not in this test.
  const settings = (acme.axios.defaults as unknown as { acmeSettings: { retryMaxAttempts: number } }).acmeSettings;
  const retries = settings.retryMaxAttempts;
  settings.retryMaxAttempts = 0;
  t.after(() => { settings.retryMaxAttempts = retries; });

  const untrusted = await refusal(issueCertificate(options(pebble, { names: ['one.http.test'], rootCa: pebbleEab.rootCa })));
  assert.equal(untrusted.code, 'acme.unreachable');
  assert.equal(untrusted.status, 502);
  assert.match(untrusted.detail, /cannot be reached: its HTTPS certificate is not trusted \([A-Z_]+\); give the authority's root CA\.$/);

  const closed = createNetServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const refused = await refusal(issueCertificate({ ...options(pebble, { names: ['one.http.test'] }), directory: `https://127.0.0.1:${port}/dir` }));
  assert.equal(refused.code, 'acme.unreachable');
  assert.match(refused.detail, /ECONNREFUSED/);
  assert.equal(challenges.size, 0);
});

test('terms not accepted: refused before anything is contacted', async () => {
  let connections = 0;
  const listener = createNetServer((s) => { connections++; s.destroy(); });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  try {
    const directory = `https://127.0.0.1:${(listener.address() as AddressInfo).port}/dir`;
    const err = await refusal(issueCertificate({ ...options(pebble, { names: ['one.http.test'] }), directory, termsAccepted: false }));
    assert.equal(err.code, 'acme.terms-not-accepted');
    assert.equal(err.status, 409);
    assert.equal(connections, 0);
  } finally {
    listener.close();
  }
});
