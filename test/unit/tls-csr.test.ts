import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayError } from '../../src/http/errors.ts';
import { answerMatches, makeSigningRequest, readSigningRequest } from '../../src/core/tls/csr.ts';
import { readCertificate, readPrivateKey } from '../../src/core/tls/pem.ts';
import { selfSigned } from '../../src/core/tls/self-signed.ts';
import { openSslKit, type OpenSslKit } from '../helpers/openssl.ts';

let kit: OpenSslKit;
before(() => {
  kit = openSslKit();
  kit.authority('Signing Authority');
});
after(() => kit.remove());

/** The authority's part: sign the request as it is, keeping the names it asks for. */
function sign(csr: string, file: string): string {
  kit.write(`${file}.csr`, csr);
  kit.write(`${file}.ext`, 'basicConstraints=CA:false\n');
  kit.run('x509', '-req', '-in', `${file}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca-key.pem', '-CAcreateserial',
    '-copy_extensions', 'copy', '-extfile', `${file}.ext`, '-days', '5', '-out', `${file}.pem`);
  return kit.read(`${file}.pem`);
}

test('a signing request asks for its names with a P-256 key and the subject given', async () => {
  const pending = await makeSigningRequest({
    names: ['Shop.Example.com', '*.api.example.com', '10.0.0.1', '2001:DB8::1'],
    subject: { organisation: 'Acme, Inc', unit: 'Platform', locality: 'Lyon', state: 'Rhône', country: 'fr', email: 'ops@example.com' },
  });
  assert.match(pending.csr, /^-----BEGIN CERTIFICATE REQUEST-----\n/);
  const key = readPrivateKey(pending.key);
  assert.equal(key.asymmetricKeyType, 'ec');
  assert.equal(key.asymmetricKeyDetails?.namedCurve, 'prime256v1');
  assert.deepEqual(readSigningRequest(pending.csr).names, ['shop.example.com', '*.api.example.com', '10.0.0.1', '2001:db8::1']);

  kit.write('asked.csr', pending.csr);
  const text = kit.run('req', '-in', 'asked.csr', '-noout', '-text', '-verify', '-nameopt', 'utf8,sep_comma_plus_space');
  assert.match(text, /Subject: CN=shop\.example\.com, C=FR, ST=Rhône, L=Lyon, O=Acme, Inc, OU=Platform, emailAddress=ops@example\.com\n/);
  assert.match(text, /IP Address:2001:DB8:0:0:0:0:0:1/);
});

test('the authority\'s answer is adopted only for the pending key', async () => {
  const pending = await makeSigningRequest({ names: ['adopt.example.com'] });
  const other = await makeSigningRequest({ names: ['adopt.example.com'] });
  const answer = sign(pending.csr, 'adopt');
  const chain = answer + kit.read('ca.pem');
  assert.equal(answerMatches(pending.key, chain), true);
  assert.equal(answerMatches(other.key, chain), false);
  assert.equal(answerMatches(pending.key, selfSigned({ names: ['adopt.example.com'], now: Date.now() }).cert), false);
  const info = readCertificate(chain);
  assert.deepEqual(info.names, ['adopt.example.com']);
  assert.equal(info.issuer, 'Signing Authority (Meerkat Tests)');
  assert.equal(info.chainLength, 2);
});

test('a request without SAN asks for its common name; an unreadable one is refused', () => {
  kit.run('req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'plain-key.pem',
    '-subj', '/CN=Plain.Example.com', '-out', 'plain.csr');
  assert.deepEqual(readSigningRequest(kit.read('plain.csr')).names, ['plain.example.com']);
  assert.throws(() => readSigningRequest('-----BEGIN CERTIFICATE REQUEST-----\nTUlJQm9ndXM=\n-----END CERTIFICATE REQUEST-----\n'),
    (err: unknown) => err instanceof GatewayError && err.code === 'tls.certificate-invalid' && err.field === 'csr');
});

test('names and subject are checked before a key is made', async () => {
  const refusal = (code: string, field: string, detail: RegExp) => (err: unknown): boolean => {
    assert.ok(err instanceof GatewayError);
    assert.equal(err.code, code);
    assert.equal(err.field, field);
    assert.match(err.detail, detail);
    return true;
  };
  await assert.rejects(makeSigningRequest({ names: ['example.com:443'] }), refusal('tls.name-invalid', 'names', /no port/));
  await assert.rejects(makeSigningRequest({ names: [] }), refusal('tls.name-invalid', 'names', /at least one name/));
  await assert.rejects(makeSigningRequest({ names: ['a.example.com'], subject: { country: 'France' } }),
    refusal('field.invalid', 'subject.country', /two letters/));
  await assert.rejects(makeSigningRequest({ names: ['a.example.com'], subject: { organisation: 'x'.repeat(65) } }),
    refusal('field.invalid', 'subject.organisation', /1 to 64 characters/));
  await assert.rejects(makeSigningRequest({ names: ['a.example.com'], subject: { colour: 'red' } as never }),
    refusal('field.invalid', 'subject.colour', /organisation, unit/));
});
