import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { GatewayError } from '../../src/http/errors.ts';
import { keyMatches, readCertificate } from '../../src/core/tls/pem.ts';
import { selfSigned } from '../../src/core/tls/self-signed.ts';
import { openSslKit } from '../helpers/openssl.ts';

const NOW_MS = Date.UTC(2026, 0, 15, 12, 0, 0);

test('a self-signed certificate carries its names, reads back, and opens a TLS context with its key', () => {
  const made = selfSigned({ names: ['Gateway.Example.com', '*.apps.example.com', '127.0.0.1', '0:0:0:0:0:0:0:1', 'gateway.example.com'], now: NOW_MS });
  assert.match(made.key, /^-----BEGIN PRIVATE KEY-----\n/);
  assert.match(made.cert, /^-----BEGIN CERTIFICATE-----\n[\s\S]*-----END CERTIFICATE-----\n$/);
  assert.ok(!made.cert.includes('\r'));
  const info = readCertificate(made.cert);
  assert.deepEqual(info.names, ['gateway.example.com', '*.apps.example.com', '127.0.0.1', '::1']);
  assert.equal(info.subject, 'gateway.example.com');
  assert.equal(info.issuer, 'gateway.example.com');
  assert.equal(info.selfSigned, true);
  assert.equal(info.chainLength, 1);
  assert.equal(info.notBefore, NOW_MS / 1000 - 60);
  assert.equal(info.notAfter, NOW_MS / 1000 + 365 * 86_400);
  assert.equal(keyMatches(made.cert, made.key), true);
  assert.doesNotThrow(() => createSecureContext({ cert: made.cert, key: made.key }));
});

test('the certificate is a server certificate signed with SHA-256, with a positive random serial', () => {
  const a = selfSigned({ names: ['a.example.com'], days: 1, now: NOW_MS });
  const b = selfSigned({ names: ['a.example.com'], days: 1, now: NOW_MS });
  const x509 = new X509Certificate(a.cert);
  assert.equal(x509.ca, false);
  assert.equal(x509.keyUsage?.includes('1.3.6.1.5.5.7.3.1'), true, 'extKeyUsage serverAuth');
  assert.notEqual(x509.serialNumber, new X509Certificate(b.cert).serialNumber);
  assert.ok(parseInt(x509.serialNumber.slice(0, 2), 16) < 0x80, 'positive serial');
  assert.equal(readCertificate(a.cert).notAfter - readCertificate(a.cert).notBefore, 86_400 + 60);

  const kit = openSslKit();
  try {
    kit.write('self.pem', a.cert);
    const text = kit.run('x509', '-in', 'self.pem', '-noout', '-text');
    assert.match(text, /Signature Algorithm: sha256WithRSAEncryption/);
    assert.match(text, /Public-Key: \(2048 bit\)/);
    assert.match(text, /X509v3 Basic Constraints: critical\s+CA:FALSE/);
    assert.match(text, /X509v3 Key Usage: critical\s+Digital Signature, Key Encipherment/);
    assert.match(text, /X509v3 Extended Key Usage:\s+TLS Web Server Authentication/);
    assert.match(text, /DNS:a\.example\.com/);
    // openssl trusts it as its own authority: the signature is sound.
    assert.match(kit.run('verify', '-CAfile', 'self.pem', '-attime', String(NOW_MS / 1000), 'self.pem'), /self.pem: OK/);
  } finally {
    kit.remove();
  }
});

test('names and days are checked before any key is made', () => {
  const refused = (names: unknown[], detail: RegExp, code = 'tls.name-invalid', field = 'names') => {
    assert.throws(() => selfSigned({ names: names as string[], now: NOW_MS }), (err: unknown) => {
      assert.ok(err instanceof GatewayError);
      assert.equal(err.code, code);
      assert.equal(err.status, 400);
      assert.equal(err.field, field);
      assert.match(err.detail, detail);
      return true;
    });
  };
  refused([], /at least one name/);
  refused(['https://example.com'], /^"https:\/\/example.com": names carry no scheme: write example.com, not https:\/\/example.com\.$/);
  refused(['ok.example.com', 'a.*.example.com'], /whole left-most label only/);
  refused(['*.com'], /under a domain/);
  refused([42], /Each name is a text/);
  refused(Array.from({ length: 101 }, (_, i) => `n${i}.example.com`), /at most 100 names; 101 were given/);
  for (const days of [0, 3651, 1.5]) {
    assert.throws(() => selfSigned({ names: ['a.example.com'], days, now: NOW_MS }), (err: unknown) =>
      err instanceof GatewayError && err.code === 'field.invalid' && err.field === 'days');
  }
  assert.doesNotThrow(() => selfSigned({ names: ['a.example.com'], days: 3650, now: NOW_MS }));
});
