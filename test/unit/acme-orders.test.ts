/** ACME orders' pure parts: the renewal threshold, an authority as written, the challenge relay. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { needsIssuance } from '../../src/actors/certs/acme-issuer.ts';
import { parseAcmeAuthority } from '../../src/core/tls/acme-authority.ts';
import { applyChallenge } from '../../src/actors/certs/challenge-relay.ts';
import { AcmeChallenges } from '../../src/core/tls/acme-challenges.ts';
import { GatewayError } from '../../src/http/errors.ts';

const DAY = 86_400;

test('an order needs its authority without a certificate, and once less than a third of its lifetime remains', () => {
  const nowMs = 1_000_000 * 1000;
  const now = nowMs / 1000;
  assert.equal(needsIssuance({ certPem: null, notBefore: null, notAfter: null }, nowMs), true);
  const cert = (issuedDaysAgo: number) => ({ certPem: 'x', notBefore: now - issuedDaysAgo * DAY, notAfter: now + (90 - issuedDaysAgo) * DAY });
  assert.equal(needsIssuance(cert(1), nowMs), false);
  assert.equal(needsIssuance(cert(59), nowMs), false); // 31 days left of 90
  assert.equal(needsIssuance(cert(61), nowMs), true); // 29 days left
  assert.equal(needsIssuance(cert(100), nowMs), true); // expired
});

const base = { name: 'Pebble', directory: 'https://acme.example.test/dir', termsAccepted: true };

function refusal(body: unknown): GatewayError {
  try {
    parseAcmeAuthority(body);
  } catch (err) {
    assert.ok(err instanceof GatewayError);
    return err;
  }
  assert.fail('accepted');
}

test('an authority as written: defaults, a reference or a literal HMAC key, "sealed" keeps the stored one', () => {
  assert.deepEqual(parseAcmeAuthority(base), { ...base, rootCa: null, email: null, eab: null, challenge: 'http-01' });
  assert.deepEqual(parseAcmeAuthority({ ...base, eab: { kid: 'k', hmacKey: '$HMAC_KEY' } }).eab, { kid: 'k', hmacKey: '$HMAC_KEY' });
  assert.deepEqual(parseAcmeAuthority({ ...base, eab: { kid: 'k', hmacKey: 'sealed' } }).eab, { kid: 'k' });
  assert.deepEqual(parseAcmeAuthority({ ...base, eab: { kid: 'k' } }).eab, { kid: 'k' });
  const literal = 'zWNDZM6eQGHWpSRTPal5eIUYFTu7EajV';
  assert.deepEqual(parseAcmeAuthority({ ...base, eab: { kid: 'k', hmacKey: literal } }).eab, { kid: 'k', hmacKey: literal });
  assert.equal(parseAcmeAuthority({ ...base, challenge: 'tls-alpn-01' }).challenge, 'tls-alpn-01');
});

test('an authority as written: each refusal names its field', () => {
  const cases: Array<[unknown, string]> = [
    [{ ...base, directory: 'http://acme.example.test/dir' }, 'directory'],
    [{ ...base, directory: 'not a url' }, 'directory'],
    [{ ...base, termsAccepted: undefined }, 'termsAccepted'],
    [{ ...base, termsAccepted: 'yes' }, 'termsAccepted'],
    [{ ...base, name: '' }, 'name'],
    [{ ...base, email: 'nobody' }, 'email'],
    [{ ...base, eab: { kid: '', hmacKey: 'zWNDZM6eQGHWpSRTPal5eIUY' } }, 'eab.kid'],
    [{ ...base, eab: { kid: 'k', hmacKey: 'short' } }, 'eab.hmacKey'],
    [{ ...base, eab: { kid: 'k', hmacKey: '$1bad' } }, 'eab.hmacKey'],
    [{ ...base, challenge: 'dns-01' }, 'challenge'],
    [{ ...base, rootCa: 'no PEM here' }, 'rootCa'],
    [{ ...base, provider: 'x' }, 'provider'],
  ];
  for (const [body, field] of cases) assert.equal(refusal(body).field, field, JSON.stringify(body));
});

test('the relay: changes applied in order; an ALPN answer is recognised by its certificate across the thread', () => {
  const board = new AcmeChallenges();
  applyChallenge(board, { op: 'add-http01', token: 'tok', keyAuthorization: 'tok.thumb' });
  applyChallenge(board, { op: 'add-alpn01', name: 'A.example.test', answer: { cert: 'c1', key: 'k1' } });
  assert.equal(board.http01('tok'), 'tok.thumb');
  assert.deepEqual(board.alpn01('a.example.test'), { cert: 'c1', key: 'k1' });
  // A copy of an earlier answer does not take down a later one for the same name.
  applyChallenge(board, { op: 'add-alpn01', name: 'a.example.test', answer: { cert: 'c2', key: 'k2' } });
  applyChallenge(board, { op: 'remove-alpn01', name: 'a.example.test', answer: { cert: 'c1', key: 'k1' } });
  assert.equal(board.alpn01('a.example.test')?.cert, 'c2');
  applyChallenge(board, { op: 'remove-alpn01', name: 'a.example.test', answer: { cert: 'c2', key: 'k2' } });
  applyChallenge(board, { op: 'remove-http01', token: 'tok' });
  assert.equal(board.size, 0);
  applyChallenge(board, { op: 'add-http01', token: 'left', keyAuthorization: 'x' });
  applyChallenge(board, { op: 'clear' });
  assert.equal(board.size, 0);
});
