/**
 * The bundle put leaf first (src/core/tls/chain.ts) and what `obtain` makes of it: chains made by the
 * openssl command line (root, intermediate, leaf), given in every order, twice, with a stranger, and
 * with an intermediate that carries the right name but another key.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { GatewayError } from '../../src/http/errors.ts';
import { leafFirst } from '../../src/core/tls/chain.ts';
import { parseCertificates } from '../../src/core/tls/pem.ts';
import { obtain } from '../../src/actors/certs/sources/obtained.ts';
import { openSslKit, type OpenSslKit } from '../helpers/openssl.ts';

let kit: OpenSslKit;
let rootPem: string;
let interPem: string;
let forgedPem: string;
let leaf: { cert: string; key: string };
let stranger: { cert: string; key: string };

/** An intermediate named `name`, signed by the kit's current CA, which then becomes the CA. */
function intermediate(file: string, name: string): string {
  kit.run('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', `${file}-key.pem`);
  kit.run('req', '-new', '-key', `${file}-key.pem`, '-out', `${file}.csr`, '-subj', `/O=Meerkat Tests/CN=${name}`);
  kit.write(`${file}.ext`, 'basicConstraints=critical,CA:true,pathlen:0\nkeyUsage=critical,keyCertSign,cRLSign\n');
  kit.run('x509', '-req', '-in', `${file}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca-key.pem', '-CAcreateserial', '-out', `${file}.pem`, '-days', '30', '-extfile', `${file}.ext`);
  return kit.read(`${file}.pem`);
}

before(() => {
  kit = openSslKit();
  rootPem = kit.authority('Chain Root').cert;
  interPem = intermediate('inter', 'Chain Intermediate');
  // The same name as the intermediate, another key: a name match alone must not link it.
  forgedPem = intermediate('forged', 'Chain Intermediate');
  kit.write('ca.pem', interPem);
  kit.write('ca-key.pem', kit.read('inter-key.pem'));
  leaf = kit.leaf('leaf', 'DNS:chain.example.test');
  kit.authority('Other Root');
  stranger = kit.leaf('stranger', 'DNS:stranger.example.test');
});
after(() => kit.remove());

const subjects = (text: string): string[] => parseCertificates(text).map((c) => c.x509.subject.split('\n').find((l) => l.startsWith('CN='))!.slice(3));
const ordered = (text: string): string[] | null => {
  const chain = leafFirst(parseCertificates(text), createPrivateKey(leaf.key), 'cert');
  return chain === null ? null : chain.map((c) => c.x509.subject.split('\n').find((l) => l.startsWith('CN='))!.slice(3));
};

test('a bundle in any order comes out leaf first, each next one the issuer of the one before', () => {
  const want = ['leaf', 'Chain Intermediate', 'Chain Root'];
  assert.deepEqual(ordered(leaf.cert + interPem + rootPem), want);
  assert.deepEqual(ordered(rootPem + interPem + leaf.cert), want);
  assert.deepEqual(ordered(interPem + leaf.cert + rootPem), want);
  assert.deepEqual(ordered(interPem + leaf.cert), ['leaf', 'Chain Intermediate']);
  assert.deepEqual(ordered(leaf.cert), ['leaf']);
  // The same certificate twice counts once.
  assert.deepEqual(ordered(leaf.cert + interPem + interPem + leaf.cert), ['leaf', 'Chain Intermediate']);
});

test('the key belonging to none of the certificates gives null (the caller names the mismatch)', () => {
  assert.equal(leafFirst(parseCertificates(stranger.cert + interPem), createPrivateKey(leaf.key), 'cert'), null);
});

const refusal = (detail: RegExp) => (err: unknown): boolean => {
  assert.ok(err instanceof GatewayError, String(err));
  assert.equal(err.code, 'tls.chain-invalid');
  assert.equal(err.status, 400);
  assert.equal(err.field, 'cert');
  assert.match(err.detail, detail);
  return true;
};

test('a certificate that signs nothing of the chain is refused with its place in the text', () => {
  assert.throws(() => ordered(leaf.cert + stranger.cert + interPem), refusal(/^Certificate 2 of 3 \(stranger\) does not certify/));
  // A root with no intermediate between it and the leaf certifies nothing here.
  assert.throws(() => ordered(leaf.cert + rootPem), refusal(/Certificate 2 of 2 \(Chain Root \(Meerkat Tests\)\).*stops at leaf, issued by Chain Intermediate/));
  // The right name with another key: the signature decides, not the name.
  assert.equal(subjects(forgedPem)[0], 'Chain Intermediate');
  assert.throws(() => ordered(forgedPem + leaf.cert), refusal(/Certificate 1 of 2/));
});

test('obtain stores the chain leaf first and reads the leaf, wherever it stood', () => {
  const got = obtain(rootPem + interPem + leaf.cert, leaf.key, { cert: 'cert', key: 'key' });
  assert.deepEqual(subjects(got.certPem), ['leaf', 'Chain Intermediate', 'Chain Root']);
  assert.deepEqual(got.names, ['chain.example.test']);
  assert.equal(got.fingerprint, new X509Certificate(leaf.cert).fingerprint256);
  assert.match(got.issuer, /Chain Intermediate/);
  assert.throws(() => obtain(interPem + leaf.cert, stranger.key, { cert: 'certPath', key: 'keyPath' }), (err: unknown) => {
    assert.ok(err instanceof GatewayError);
    assert.equal(err.code, 'tls.key-mismatch');
    assert.equal(err.field, 'keyPath');
    return true;
  });
  assert.throws(() => obtain(leaf.cert + stranger.cert, leaf.key, { cert: 'certPath', key: 'keyPath' }), (err: unknown) => {
    assert.ok(err instanceof GatewayError);
    assert.equal(err.code, 'tls.chain-invalid');
    assert.equal(err.field, 'certPath');
    return true;
  });
});
