import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildDigest, type DigestCertificate } from '../../src/core/tls/digest.ts';

const DAY = 86_400;
const NOW = Date.UTC(2026, 2, 1, 6, 0, 0) / 1000;

function cert(id: string, names: string[], daysLeft: number, planes: string[] = ['app']): DigestCertificate {
  return { id, name: `cert ${id}`, names, notAfter: NOW + daysLeft * DAY, planes };
}

test('nothing to say: no certificates, or every one beyond the horizon', () => {
  assert.equal(buildDigest([], NOW, 30), null);
  assert.equal(buildDigest([cert('a', ['a.example.com'], 31), cert('b', ['b.example.com'], 400)], NOW, 30), null);
});

test('the horizon: a certificate expiring on its last second is named, one second later is not', () => {
  const edge = { ...cert('edge', ['edge.example.com'], 0), notAfter: NOW + 30 * DAY };
  const past = { ...edge, id: 'past', notAfter: NOW + 30 * DAY + 1 };
  assert.deepEqual(buildDigest([edge, past], NOW, 30)?.expiring.map((e) => e.id), ['edge']);
  assert.deepEqual(buildDigest([edge], NOW, 7), null);
});

test('expiring soonest first, then the expired, most recently expired first', () => {
  const d = buildDigest([
    cert('late', ['late.example.com'], 20),
    cert('long-gone', ['gone.example.com'], -40),
    cert('soon', ['soon.example.com'], 2),
    cert('just-gone', ['just.example.com'], -1),
    cert('healthy', ['ok.example.com'], 200),
  ], NOW, 30)!;
  assert.deepEqual(d.expiring.map((e) => e.id), ['soon', 'late']);
  assert.deepEqual(d.expired.map((e) => e.id), ['just-gone', 'long-gone']);
  assert.deepEqual(d.expiring.map((e) => e.days), [2, 20]);
  assert.deepEqual(d.expired.map((e) => e.days), [1, 40]);
  const order = ['cert soon', 'cert late', 'cert just-gone', 'cert long-gone'].map((n) => d.text.indexOf(`- ${n}\n`));
  assert.ok(order.every((at, i) => at >= 0 && (i === 0 || at > order[i - 1]!)), `the text keeps that order:\n${d.text}`);
  assert.doesNotMatch(d.text, /healthy|ok\.example\.com/);
});

test('a certificate in reserve whose names a longer-lived one carries is not named', () => {
  const d = buildDigest([
    cert('old', ['shop.example.com', 'www.example.com'], 5, []),
    cert('new', ['shop.example.com', 'www.example.com'], 90),
    cert('gone', ['shop.example.com'], -3, []),
  ], NOW, 30);
  assert.equal(d, null, 'both reserve certificates are superseded by the placed one');
});

test('a reserve certificate is kept when one of its names is carried by no longer-lived certificate', () => {
  const d = buildDigest([
    cert('old', ['shop.example.com', 'api.example.com'], 5, []),
    cert('new', ['shop.example.com'], 90),
    cert('shorter', ['api.example.com'], 3),
  ], NOW, 30)!;
  assert.deepEqual(d.expiring.map((e) => e.id), ['shorter', 'old'], 'api.example.com lives longest on the reserve one');
  assert.match(d.text, /- cert old\n {2}names: shop\.example\.com, api\.example\.com\n {2}in reserve/);
});

test('a wildcard carries one label for the reserve rule', () => {
  const wild = cert('wild', ['*.example.com'], 300);
  const covered = buildDigest([wild, cert('one', ['shop.example.com', 'WWW.Example.com.'], 10, [])], NOW, 30);
  assert.equal(covered, null);
  const apex = buildDigest([wild, cert('apex', ['example.com'], 10, [])], NOW, 30);
  assert.deepEqual(apex?.expiring.map((e) => e.id), ['apex'], 'the wildcard does not carry the bare domain');
  const deep = buildDigest([wild, cert('deep', ['a.b.example.com'], 10, [])], NOW, 30);
  assert.deepEqual(deep?.expiring.map((e) => e.id), ['deep'], 'nor two labels');
  const sameWildcard = buildDigest([wild, cert('w2', ['*.example.com'], 10, [])], NOW, 30);
  assert.equal(sameWildcard, null, 'a wildcard written the same way carries itself');
});

test('a placed certificate is always named, even when a longer-lived one carries its names', () => {
  const d = buildDigest([
    cert('placed', ['shop.example.com'], 4, ['console']),
    cert('spare', ['shop.example.com'], 365, []),
  ], NOW, 30)!;
  assert.deepEqual(d.expiring.map((e) => e.id), ['placed']);
});

test('only a longer-lived certificate supersedes: a shorter one or the certificate itself does not', () => {
  const d = buildDigest([
    cert('reserve', ['shop.example.com'], 10, []),
    cert('shorter', ['shop.example.com'], 5),
  ], NOW, 30)!;
  assert.deepEqual(d.expiring.map((e) => e.id), ['shorter', 'reserve']);
  assert.deepEqual(buildDigest([cert('alone', ['x.example.com'], 10, [])], NOW, 30)?.expiring.map((e) => e.id), ['alone']);
  assert.deepEqual(buildDigest([cert('nameless', [], 10, []), cert('other', ['y.example.com'], 90)], NOW, 30)?.expiring.map((e) => e.id), ['nameless']);
});

test('the subject counts, and the text gives name, names, planes, date and days', () => {
  const d = buildDigest([
    cert('a', ['a.example.com', 'b.example.com'], 3, ['console', 'app']),
    { ...cert('b', ['c.example.com'], 0), notAfter: NOW + 3600 },
    cert('c', ['old.example.com'], -1, []),
    cert('d', ['d.example.com'], 1),
  ], NOW, 14)!;
  assert.equal(d.subject, 'Meerkat: 3 certificates expire within 14 days; 1 certificate has expired');
  assert.match(d.text, /- cert a\n {2}names: a\.example\.com, b\.example\.com\n {2}placed on: console, app\n {2}expires in 3 days, on 2026-03-04 06:00 UTC\n/);
  assert.match(d.text, /- cert b\n.*\n.*\n {2}expires in less than a day, on 2026-03-01 07:00 UTC\n/);
  assert.match(d.text, /- cert d\n.*\n.*\n {2}expires in 1 day, on 2026-03-02 06:00 UTC\n/);
  assert.match(d.text, /- cert c\n {2}names: old\.example\.com\n {2}in reserve \(placed on no plane\)\n {2}expired 1 day ago, on 2026-02-28 06:00 UTC\n/);
  assert.match(d.text, /^Certificates expiring within 14 days, soonest first:/);
  assert.match(d.text, /Certificates that have expired, most recently expired first:/);
  assert.equal(buildDigest([cert('x', ['x.example.com'], 5)], NOW, 1), null);
  assert.equal(buildDigest([cert('x', ['x.example.com'], -5)], NOW, 1)?.subject, 'Meerkat: 1 certificate has expired');
  assert.equal(buildDigest([cert('x', ['x.example.com'], 0.5)], NOW, 1)?.subject, 'Meerkat: 1 certificate expires within 1 day');
});

test('the text says how many superseded reserve certificates it leaves out, without naming them', () => {
  const d = buildDigest([
    cert('kept', ['kept.example.com'], 2),
    cert('spare', ['kept.example.com'], 1, []),
  ], NOW, 30)!;
  assert.deepEqual(d.expiring.map((e) => e.id), ['kept']);
  assert.match(d.text, /1 certificate in reserve is not named: a longer-lived certificate carries its names\./);
  assert.doesNotMatch(d.text, /spare/);
});

test('expired at the last second of validity: notAfter itself is still valid', () => {
  const d = buildDigest([{ ...cert('edge', ['e.example.com'], 0), notAfter: NOW }, { ...cert('gone', ['g.example.com'], 0), notAfter: NOW - 1 }], NOW, 30)!;
  assert.deepEqual(d.expiring.map((e) => e.id), ['edge']);
  assert.deepEqual(d.expired.map((e) => e.id), ['gone']);
  assert.match(d.text, /expired less than a day ago/);
});
