import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayError } from '../../src/http/errors.ts';
import { readAuthorities } from '../../src/core/tls/authority-pem.ts';
import { openSslKit, type OpenSslKit } from '../helpers/openssl.ts';

let kit: OpenSslKit;
let root: { cert: string; key: string };
let second: string;

before(() => {
  kit = openSslKit();
  kit.run('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'second-key.pem',
    '-out', 'second.pem', '-days', '3', '-subj', '/CN=Second Root');
  second = kit.read('second.pem');
  root = kit.authority('Corporate Root');
});
after(() => kit.remove());

const refusal = (code: string, detail: RegExp) => (err: unknown): boolean => {
  assert.ok(err instanceof GatewayError);
  assert.equal(err.code, code);
  assert.equal(err.status, 400);
  assert.equal(err.field, 'pem');
  assert.match(err.detail, detail);
  return true;
};

test('a bundle of authorities is read: subjects, earliest end, first fingerprint, count', () => {
  const info = readAuthorities(`# corporate bundle\r\n${root.cert.replace(/\n/g, '\r\n')}\n\n${second}`);
  assert.deepEqual(info.subjects, ['Corporate Root (Meerkat Tests)', 'Second Root']);
  assert.equal(info.count, 2);
  assert.deepEqual(info.pems, [root.cert, second]);
  const fingerprint = /Fingerprint=(.*)/.exec(kit.run('x509', '-in', 'ca.pem', '-noout', '-fingerprint', '-sha256'))?.[1];
  assert.equal(info.fingerprint, fingerprint);
  const secondEnd = /notAfter=(.*)/.exec(kit.run('x509', '-in', 'second.pem', '-noout', '-enddate'))![1]!;
  assert.equal(info.notAfter, Date.parse(secondEnd) / 1000, 'the earliest end: the 3-day root');
});

test('a PEM holding a private key is refused with the reason, whatever its kind', () => {
  const reason = /^This PEM holds a private key; a trusted authority is a public certificate only: remove the key and send the certificates\.$/;
  assert.throws(() => readAuthorities(root.cert + root.key), refusal('tls.key-in-authority', reason));
  assert.throws(() => readAuthorities(kit.read('second-key.pem') + second), refusal('tls.key-in-authority', reason));
  kit.run('ec', '-in', 'ca-key.pem', '-aes256', '-passout', 'pass:x', '-out', 'enc-key.pem');
  assert.throws(() => readAuthorities(root.cert + kit.read('enc-key.pem')), refusal('tls.key-in-authority', reason));
});

test('a PEM without a readable certificate is refused', () => {
  assert.throws(() => readAuthorities('just words'), refusal('tls.certificate-invalid', /no -----BEGIN CERTIFICATE----- block/));
  const broken = '-----BEGIN CERTIFICATE-----\nTUlJQm9ndXM=\n-----END CERTIFICATE-----\n';
  assert.throws(() => readAuthorities(root.cert + broken), refusal('tls.certificate-invalid', /Certificate 2 of 2 cannot be read/));
});
