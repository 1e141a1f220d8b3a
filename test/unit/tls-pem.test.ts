import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createPrivateKey } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { GatewayError } from '../../src/http/errors.ts';
import { hasPrivateKey, keyMatches, pemBlocks, readCertificate, readPrivateKey, splitPem } from '../../src/core/tls/pem.ts';
import { openSslKit, type OpenSslKit } from '../helpers/openssl.ts';

let kit: OpenSslKit;
let ca: { cert: string; key: string };
let leaf: { cert: string; key: string };

before(() => {
  kit = openSslKit();
  ca = kit.authority();
  leaf = kit.leaf('shop', 'DNS:Shop.Example.com,DNS:*.api.example.com,IP:10.0.0.1,IP:2001:db8:0:0::1,email:ops@example.com');
  // Keys in the forms people bring: PKCS#8 and PKCS#1 RSA, SEC1 EC with its parameters, encrypted both ways.
  kit.run('genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', 'rsa8.pem');
  kit.run('rsa', '-in', 'rsa8.pem', '-traditional', '-out', 'rsa1.pem');
  kit.run('genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-aes256', '-pass', 'pass:secret', '-out', 'enc.pem');
  kit.run('rsa', '-in', 'enc.pem', '-passin', 'pass:secret', '-traditional', '-aes128', '-passout', 'pass:secret', '-out', 'legacy-enc.pem');
  kit.run('ecparam', '-name', 'prime256v1', '-genkey', '-out', 'ec-sec1.pem');
});
after(() => kit.remove());

const refusal = (code: string, detail: RegExp, field?: string) => (err: unknown): boolean => {
  assert.ok(err instanceof GatewayError, String(err));
  assert.equal(err.code, code);
  assert.equal(err.status, 400);
  assert.match(err.detail, detail);
  if (field !== undefined) assert.equal(err.field, field);
  return true;
};

test('splitPem tolerates CRLF, text around the blocks, blank and long lines', () => {
  const base64 = leaf.cert.split('\n').filter((l) => l && !l.startsWith('-----')).join('');
  const messy = `Bag Attributes: friendly\r\nsubject=/CN=shop\r\n\r\n-----BEGIN CERTIFICATE-----\r\n\r\n  ${base64}  \r\n-----END CERTIFICATE-----\r\n\r\n${leaf.key.replace(/\n/g, '\r\n')}trailing words`;
  const blocks = splitPem(messy);
  assert.deepEqual(blocks.map((b) => b.type), ['CERTIFICATE', 'PRIVATE KEY']);
  assert.equal(blocks[0]!.pem, leaf.cert);
  assert.equal(blocks[1]!.pem, leaf.key);
  assert.ok(blocks.every((b) => b.pem.endsWith('-----\n') && !b.pem.includes('\r')));
  assert.deepEqual(splitPem('nothing here'), []);
  assert.deepEqual(splitPem('-----BEGIN CERTIFICATE-----\nabc\n-----END PRIVATE KEY-----\n'), [], 'mismatched labels are no block');
});

test('hasPrivateKey sees every kind of private key block, encrypted too', () => {
  assert.equal(hasPrivateKey(leaf.cert), false);
  assert.equal(hasPrivateKey(leaf.cert + leaf.key), true);
  assert.match(kit.read('enc.pem'), /BEGIN ENCRYPTED PRIVATE KEY/);
  assert.match(kit.read('legacy-enc.pem'), /Proc-Type: 4,ENCRYPTED/);
  for (const file of ['enc.pem', 'legacy-enc.pem', 'ec-sec1.pem']) assert.equal(hasPrivateKey(kit.read(file)), true, file);
  // The legacy headers and their blank line survive normalisation: the block still opens with its passphrase.
  const legacy = splitPem(kit.read('legacy-enc.pem').replace(/\n/g, '\r\n'))[0]!;
  assert.equal(createPrivateKey({ key: legacy.pem, passphrase: 'secret' }).asymmetricKeyType, 'rsa');
  assert.deepEqual(splitPem(kit.read('ec-sec1.pem')).map((b) => b.type), ['EC PARAMETERS', 'EC PRIVATE KEY']);
});

test('readCertificate gives names, subject, issuer, validity, fingerprint and the chain', () => {
  const info = readCertificate(`${leaf.cert}${ca.cert}`);
  assert.deepEqual(info.names, ['shop.example.com', '*.api.example.com', '10.0.0.1', '2001:db8::1']);
  assert.equal(info.subject, 'shop');
  assert.equal(info.issuer, 'Meerkat Test Root (Meerkat Tests)');
  assert.equal(info.selfSigned, false);
  assert.equal(info.chainLength, 2);
  assert.equal(info.leafPem, leaf.cert);
  assert.equal(info.chainPem, leaf.cert + ca.cert);
  const openssl = kit.run('x509', '-in', 'shop.pem', '-noout', '-fingerprint', '-sha256', '-startdate', '-enddate');
  assert.equal(info.fingerprint, /Fingerprint=(.*)/.exec(openssl)?.[1]);
  assert.equal(info.notBefore, Date.parse(/notBefore=(.*)/.exec(openssl)![1]!) / 1000);
  assert.equal(info.notAfter, Date.parse(/notAfter=(.*)/.exec(openssl)![1]!) / 1000);
  assert.equal(info.notAfter - info.notBefore, 10 * 86_400);
  // The chain is what a door presents: node accepts it with the key.
  assert.doesNotThrow(() => createSecureContext({ cert: info.chainPem, key: leaf.key }));
});

test('the common name is the name only when there is no SAN, and only when it is a host name', () => {
  const cnOnly = kit.leaf('legacy', '', { cn: 'Legacy.Example.com' });
  assert.deepEqual(readCertificate(cnOnly.cert).names, ['legacy.example.com']);
  const withSan = kit.leaf('both', 'DNS:other.example.com', { cn: 'cn.example.com' });
  assert.deepEqual(readCertificate(withSan.cert).names, ['other.example.com']);
  const root = readCertificate(ca.cert);
  assert.deepEqual(root.names, [], 'a CN such as "Meerkat Test Root" names no host');
  assert.equal(root.selfSigned, true);
  assert.equal(root.subject, root.issuer);
});

test('readCertificate refuses text without a readable certificate, saying why', () => {
  assert.throws(() => readCertificate(''), refusal('tls.certificate-invalid', /no -----BEGIN CERTIFICATE----- block/, 'cert'));
  assert.throws(() => readCertificate(leaf.key, 'answer'), refusal('tls.certificate-invalid', /holds a PRIVATE KEY block, not a CERTIFICATE/, 'answer'));
  assert.throws(() => readCertificate(kit.read('shop.csr')), refusal('tls.certificate-invalid', /signing request, not a certificate/));
  const broken = '-----BEGIN CERTIFICATE-----\nTUlJQm9ndXM=\n-----END CERTIFICATE-----\n';
  assert.throws(() => readCertificate(broken), refusal('tls.certificate-invalid', /^The certificate cannot be read/));
  assert.throws(() => readCertificate(leaf.cert + broken), refusal('tls.certificate-invalid', /^Certificate 2 of 2 cannot be read/));
});

test('readPrivateKey reads PKCS#8, SEC1 (with its parameters block) and PKCS#1 keys', () => {
  assert.equal(readPrivateKey(leaf.key).asymmetricKeyType, 'ec');
  assert.equal(readPrivateKey(kit.read('ec-sec1.pem')).asymmetricKeyType, 'ec');
  assert.match(kit.read('rsa1.pem'), /BEGIN RSA PRIVATE KEY/);
  assert.equal(readPrivateKey(kit.read('rsa1.pem').replace(/\n/g, '\r\n')).asymmetricKeyType, 'rsa');
});

test('readPrivateKey refuses encrypted, missing, doubled and broken keys', () => {
  const passphrase = /protected by a passphrase: give the key without one/;
  assert.throws(() => readPrivateKey(kit.read('enc.pem')), refusal('tls.key-invalid', passphrase, 'key'));
  assert.throws(() => readPrivateKey(kit.read('legacy-enc.pem')), refusal('tls.key-invalid', passphrase));
  assert.throws(() => readPrivateKey(leaf.cert), refusal('tls.key-invalid', /No private key found/));
  assert.throws(() => readPrivateKey(leaf.key + ca.key), refusal('tls.key-invalid', /2 private keys/));
  const broken = '-----BEGIN PRIVATE KEY-----\nTUlJQm9ndXM=\n-----END PRIVATE KEY-----\n';
  assert.throws(() => readPrivateKey(broken), refusal('tls.key-invalid', /cannot be read: its PRIVATE KEY block/));
});

test('keyMatches pairs a leaf with its own key only', () => {
  assert.equal(keyMatches(leaf.cert + ca.cert, leaf.key), true);
  assert.equal(keyMatches(leaf.cert, ca.key), false);
  assert.equal(keyMatches(leaf.cert, kit.read('rsa8.pem')), false, 'a key of another type is no match either');
  assert.throws(() => keyMatches(leaf.cert, kit.read('enc.pem')), refusal('tls.key-invalid', /passphrase/));
});

test('keys no TLS client would accept are refused with what to use instead', () => {
  kit.run('genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:1024', '-out', 'rsa1024.pem');
  kit.run('genpkey', '-genparam', '-algorithm', 'DSA', '-pkeyopt', 'dsa_paramgen_bits:2048', '-out', 'dsa-params.pem');
  kit.run('genpkey', '-paramfile', 'dsa-params.pem', '-out', 'dsa.pem');
  kit.run('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:secp256k1', '-out', 'k1.pem');
  kit.run('genpkey', '-algorithm', 'ED25519', '-out', 'ed.pem');
  for (const [file, why] of [['rsa1024.pem', /1024 bits: clients refuse fewer than 2048/], ['dsa.pem', /A dsa key cannot sign TLS handshakes/], ['k1.pem', /on secp256k1, a curve TLS clients do not offer/]] as const) {
    assert.throws(() => readPrivateKey(kit.read(file)), (err: unknown) => err instanceof GatewayError && err.code === 'tls.key-invalid' && why.test(err.detail) && /RSA key of 2048 bits or more/.test(err.detail), file);
  }
  for (const file of ['rsa8.pem', 'ec-sec1.pem', 'ed.pem']) assert.equal(typeof readPrivateKey(kit.read(file)).asymmetricKeyType, 'string', file);
});

test('SAN entries no client matches are carried by nobody; the CN names nothing beside a SAN', () => {
  const odd = kit.leaf('odd', 'DNS:*.com,DNS:x_y.example.test,DNS:a*.example.test,DNS:*.*.example.test,DNS:*,DNS:Ok.Example.test,IP:10.0.0.9', { cn: 'cn.example.test' });
  assert.deepEqual(readCertificate(odd.cert).names, ['ok.example.test', '10.0.0.9']);
  const none = kit.leaf('none', 'DNS:*.com', { cn: 'cn.example.test' });
  assert.deepEqual(readCertificate(none.cert).names, [], 'the CN does not stand in for a SAN that names nothing usable');
});

test('pemBlocks finds the blocks the lazy expression found, on texts made at random', () => {
  const LAZY = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g;
  const pieces = ['-----BEGIN A-----', '-----END A-----', '-----BEGIN B C-----', '-----END B C-----', '-----BEGIN B-----', '-----END B-----', 'xyz', '\n', '-----', 'MIIB', ' '];
  let seed = 7;
  const random = (n: number) => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed % n; };
  for (let round = 0; round < 2000; round++) {
    const text = Array.from({ length: random(24) }, () => pieces[random(pieces.length)]).join('');
    const want = [...text.matchAll(LAZY)].map((m) => ({ label: m[1], body: m[2], text: m[0] }));
    assert.deepEqual(pemBlocks(text), want, JSON.stringify(text));
  }
});

// The lazy expression held its thread about twenty seconds on this text (an actor, and /readyz with
// it). A synchronous call cannot be timed out from its own thread: it runs in a child process,
// given ten seconds, far above the milliseconds one pass takes.
test('pemBlocks reads a megabyte of BEGIN lines without an END, not in quadratic time', () => {
  const module = new URL('../../src/core/tls/pem.ts', import.meta.url).href;
  const script = `const { pemBlocks } = await import(${JSON.stringify(module)});
const text = '-----BEGIN A-----\\n'.repeat(55000) + '-----BEGIN CERTIFICATE-----\\nMIIB\\n-----END CERTIFICATE-----\\n';
process.stdout.write(pemBlocks(text).map((b) => b.label).join(','));`;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { timeout: 10_000, encoding: 'utf8' });
  assert.equal(out, 'CERTIFICATE');
});
