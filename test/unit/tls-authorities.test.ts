import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { GatewayError } from '../../src/http/errors.ts';
import { parseAuthority, readAuthorityPem } from '../../src/core/tls/authorities.ts';
import { makeCa } from '../helpers/private-ca.ts';

const DAY = 86_400;
const longer = makeCa('Meerkat Root Long', 30);
const shorter = makeCa('Meerkat Root Short', 5);
after(() => {
  longer.remove();
  shorter.remove();
});

function refusal(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof GatewayError, String(err));
    return err;
  }
  assert.fail('no refusal');
}

test('a PEM of several certificates: each subject, the count, the earliest end, the first one\'s fingerprint', () => {
  const now = Math.floor(Date.now() / 1000);
  const bundle = `# corporate bundle\n${longer.cert}\nsome text between blocks\n${shorter.cert}`;
  const read = readAuthorityPem(bundle);
  assert.equal(read.count, 2);
  assert.deepEqual(read.subjects, ['CN=Meerkat Root Long', 'CN=Meerkat Root Short']);
  assert.ok(Math.abs(read.notAfter - (now + 5 * DAY)) < 120, `notAfter ${read.notAfter} is the shorter authority's end`);
  assert.equal(read.fingerprint, new X509Certificate(longer.cert).fingerprint256);
  assert.match(read.fingerprint, /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
  // Only the certificates are kept, each whole: the comment and the text between them are gone.
  assert.equal(read.pems.length, 2);
  assert.ok(read.pems.every((p) => p.startsWith('-----BEGIN CERTIFICATE-----') && p.trimEnd().endsWith('-----END CERTIFICATE-----')));
  assert.ok(!read.pems.join('').includes('bundle'));
  assert.equal(new X509Certificate(read.pems[1]!).fingerprint256, new X509Certificate(shorter.cert).fingerprint256);
});

test('a private key of any kind is refused with the reason, whatever else the PEM holds', () => {
  const encrypted = execFileSync('openssl', ['pkcs8', '-topk8', '-v2', 'aes-256-cbc', '-passout', 'pass:secret-pass'], { input: longer.key }).toString();
  const rsaLegacy = '-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAK\n-----END RSA PRIVATE KEY-----\n';
  for (const key of [longer.key, encrypted, rsaLegacy]) {
    const err = refusal(() => readAuthorityPem(`${longer.cert}${key}`));
    assert.equal(err.code, 'tls.key-in-authority');
    assert.equal(err.status, 400);
    assert.equal(err.field, 'pem');
    assert.match(err.detail, /private key/);
    assert.match(err.detail, /public certificate only/);
  }
  assert.match(encrypted, /ENCRYPTED PRIVATE KEY/);
});

test('no certificate, an unreadable one, or another kind of block: tls.certificate-invalid on pem', () => {
  const body = longer.cert.split('\n').slice(1, -2).join('\n');
  // Cut short: the DER inside ends before the certificate does.
  const broken = `-----BEGIN CERTIFICATE-----\n${body.slice(0, 200)}\n-----END CERTIFICATE-----\n`;
  for (const [pem, sentence] of [
    ['hello', /holds no certificate/],
    [body, /holds no certificate/],
    ['-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n', /Certificate 1 .*cannot be read/],
    [`${longer.cert}${broken}`, /Certificate 2 .*cannot be read/],
    [`${longer.cert}-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n`, /Block 2 .*PUBLIC KEY/],
  ] as const) {
    const err = refusal(() => readAuthorityPem(pem));
    assert.equal(err.code, 'tls.certificate-invalid', String(pem).slice(0, 30));
    assert.equal(err.field, 'pem');
    assert.match(err.detail, sentence);
  }
});

test('the body: a name of 1 to 100 characters and a PEM, nothing else', () => {
  assert.deepEqual(parseAuthority({ name: 'Corporate root', pem: 'x' }), { name: 'Corporate root', pem: 'x' });
  for (const [body, field] of [
    [{ pem: 'x' }, 'name'],
    [{ name: '', pem: 'x' }, 'name'],
    [{ name: 'a'.repeat(101), pem: 'x' }, 'name'],
    [{ name: 'line\nbreak', pem: 'x' }, 'name'],
    [{ name: 'ok' }, 'pem'],
    [{ name: 'ok', pem: 7 }, 'pem'],
    [{ name: 'ok', pem: 'x', key: 'y' }, 'key'],
  ] as const) {
    const err = refusal(() => parseAuthority(body));
    assert.equal(err.code, 'field.invalid');
    assert.equal(err.field, field);
  }
  assert.equal(parseAuthority({ name: 'a'.repeat(100), pem: 'x' }).name.length, 100);
});
