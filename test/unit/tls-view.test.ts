/**
 * A certificate OpenSSL will not present (here a leaf signed with MD5) neither enters an HTTPS
 * door nor stops the others: the view leaves it out, says so once, and keeps following snapshots;
 * and where a certificate is obtained (import, files, a CSR's answer, ACME) it is refused at once.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { openSslKit } from '../helpers/openssl.ts';
import { TlsView } from '../../src/actors/certs/view.ts';
import { NO_DOOR, HSTS_DEFAULT, type CertRecord, type TlsSnapshot } from '../../src/actors/certs/messages.ts';
import { obtain } from '../../src/actors/certs/sources/obtained.ts';
import { GatewayError } from '../../src/http/errors.ts';
import { randomBytes } from 'node:crypto';
import { keyContext, presentable } from '../../src/actors/certs/records.ts';
import { seal } from '../../src/core/vault/seal.ts';
import type { CertificateRow } from '../../src/store/entities.ts';

const kit = openSslKit();
after(() => kit.remove());

function weakLeaf(): { cert: string; key: string } {
  kit.run('genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', 'rsa-ca-key.pem');
  kit.run('req', '-x509', '-new', '-key', 'rsa-ca-key.pem', '-out', 'rsa-ca.pem', '-days', '30', '-subj', '/CN=Weak Root', '-addext', 'basicConstraints=critical,CA:true');
  kit.run('genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', 'weak-key.pem');
  kit.run('req', '-new', '-key', 'weak-key.pem', '-out', 'weak.csr', '-subj', '/CN=weak.test');
  kit.write('weak.ext', 'basicConstraints=CA:false\nsubjectAltName=DNS:weak.test\n');
  kit.run('x509', '-req', '-in', 'weak.csr', '-CA', 'rsa-ca.pem', '-CAkey', 'rsa-ca-key.pem', '-CAcreateserial', '-md5', '-out', 'weak.pem', '-days', '10', '-extfile', 'weak.ext');
  return { cert: kit.read('weak.pem'), key: kit.read('weak-key.pem') };
}

function record(id: string, names: string[]): CertRecord {
  const now = Math.floor(Date.now() / 1000);
  return { id, name: id, names, issuer: null, notBefore: now - 60, notAfter: now + 86_400, source: 'import', planes: ['app'], inactive: [], state: 'active', detail: null, fingerprint: null, createdAt: now };
}

test('the view leaves out the certificate OpenSSL refuses, says so once, and serves the others', () => {
  kit.authority();
  const good = kit.leaf('good', 'DNS:good.test');
  const weak = weakLeaf();
  const refused: Array<[string, string]> = [];
  const view = new TlsView((id, reason) => refused.push([id, reason]));
  const snapshot = (ids: string[]): TlsSnapshot => ({
    certificates: [record('c-weak', ['weak.test']), record('c-good', ['good.test'])].filter((c) => ids.includes(c.id)),
    placements: ids.map((id, i) => ({ id, plane: 'app', placedAt: i })),
    material: [{ id: 'c-weak', ...weak }, { id: 'c-good', ...good }].filter((m) => ids.includes(m.id)),
    settings: { httpOff: [], redirect: { forceHttps: false, hstsMaxAge: HSTS_DEFAULT }, doors: { console: NO_DOOR, app: NO_DOOR } },
  });
  view.apply(snapshot(['c-weak']));
  assert.deepEqual(view.served('app'), []);
  view.apply(snapshot(['c-weak', 'c-good']));
  assert.deepEqual(view.served('app').map((c) => c.id), ['c-good'], 'the next snapshot still applies');
  assert.ok(!(view.contextFor('app', 'good.test', Date.now()) instanceof Error));
  assert.ok(view.contextFor('app', 'weak.test', Date.now()) !== undefined);
  assert.equal(refused.length, 1, 'said once, not at every snapshot');
  assert.equal(refused[0]![0], 'c-weak');
  assert.match(refused[0]![1], /md too weak|digest/i);
});

test('obtaining it is refused with OpenSSL\'s reason', () => {
  const weak = weakLeaf();
  assert.throws(() => obtain(weak.cert, weak.key, { cert: 'cert', key: 'key' }), (err: unknown) => {
    assert.ok(err instanceof GatewayError);
    assert.equal(err.code, 'tls.certificate-invalid');
    assert.equal(err.field, 'cert');
    assert.match(err.detail, /OpenSSL refuses it \(.*md too weak/i);
    return true;
  });
});

test('a stored certificate OpenSSL refuses does not count as one that serves (the plain ports\' safety rules)', () => {
  kit.authority();
  const good = kit.leaf('counted', 'DNS:counted.test');
  const weak = weakLeaf();
  const masterKey = randomBytes(32);
  const now = Math.floor(Date.now() / 1000);
  const row = (id: string, pair: { cert: string; key: string }) => ({
    id, name: id, names: [`${id}.test`], source: 'import', status: 'active', certPem: pair.cert,
    keySealed: seal(masterKey, keyContext(id), pair.key), notBefore: now - 60, notAfter: now + 86_400,
  }) as unknown as CertificateRow;
  assert.equal(presentable(row('good', good), masterKey, now), true);
  assert.equal(presentable(row('weak', weak), masterKey, now), false);
});
