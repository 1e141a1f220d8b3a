import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chooseCertificate, describeServed, servedNames, type Candidate } from '../../src/core/tls/choose.ts';

const NOW = 1_800_000_000;
const DAY = 86_400;
const cert = (id: string, names: string[], notAfter: number, placedAt: number): Candidate => ({ id, names, notAfter, placedAt });

const shop = cert('shop', ['shop.example.com'], NOW + 30 * DAY, 300);
const shopLonger = cert('shop-longer', ['shop.example.com', 'www.example.com'], NOW + 90 * DAY, 400);
const shopExpired = cert('shop-expired', ['shop.example.com'], NOW - DAY, 50);
const wildcard = cert('wildcard', ['*.example.com'], NOW + 60 * DAY, 200);
const address = cert('address', ['10.0.0.1', '::1'], NOW + 10 * DAY, 100);
const oldest = cert('oldest', ['legacy.example.org'], NOW + 5 * DAY, 10);
/** A renewal placed before its start: valid longest, but not yet. */
const shopEarly: Candidate = { ...cert('shop-early', ['shop.example.com'], NOW + 120 * DAY, 500), notBefore: NOW + 10 * DAY };
const shopJustMade: Candidate = { ...cert('shop-just-made', ['shop.example.com'], NOW + 100 * DAY, 600), notBefore: NOW + 60 };

interface Row {
  readonly rule: string;
  readonly placed: readonly Candidate[];
  readonly serverName: string | undefined;
  readonly expect: { kind: 'match' | 'fallback'; id: string } | { kind: 'none'; served: string[] };
}

const table: Row[] = [
  { rule: 'the one carrying the name wins', placed: [oldest, shop], serverName: 'shop.example.com', expect: { kind: 'match', id: 'shop' } },
  { rule: 'the server name is compared without case or final dot', placed: [oldest, shop], serverName: 'SHOP.example.com.', expect: { kind: 'match', id: 'shop' } },
  { rule: 'two carry it: the one valid longest', placed: [shop, shopLonger], serverName: 'shop.example.com', expect: { kind: 'match', id: 'shop-longer' } },
  { rule: 'the longest regardless of the order given', placed: [shopLonger, shop], serverName: 'shop.example.com', expect: { kind: 'match', id: 'shop-longer' } },
  { rule: 'a valid one beats an expired one placed earlier', placed: [shopExpired, shop], serverName: 'shop.example.com', expect: { kind: 'match', id: 'shop' } },
  { rule: 'a valid one beats one valid longer that has not started', placed: [shop, shopEarly], serverName: 'shop.example.com', expect: { kind: 'match', id: 'shop' } },
  { rule: 'a start a minute ahead is clocks disagreeing, not a certificate not valid yet', placed: [shop, shopJustMade], serverName: 'shop.example.com', expect: { kind: 'match', id: 'shop-just-made' } },
  { rule: 'an expired one still answers its name when nothing else carries it', placed: [oldest, shopExpired], serverName: 'shop.example.com', expect: { kind: 'match', id: 'shop-expired' } },
  { rule: 'a wildcard carries a one-label name', placed: [oldest, wildcard], serverName: 'api.example.com', expect: { kind: 'match', id: 'wildcard' } },
  { rule: 'no preference of an exact name over a wildcard: the wildcard valid longer wins', placed: [shop, wildcard], serverName: 'shop.example.com', expect: { kind: 'match', id: 'wildcard' } },
  { rule: 'the exact name wins when it is valid longer', placed: [shopLonger, wildcard], serverName: 'shop.example.com', expect: { kind: 'match', id: 'shop-longer' } },
  { rule: 'a wildcard does not carry the bare domain: fallback', placed: [wildcard, shop], serverName: 'example.com', expect: { kind: 'fallback', id: 'wildcard' } },
  { rule: 'an address entry answers an address asked', placed: [oldest, address], serverName: '::1', expect: { kind: 'match', id: 'address' } },
  { rule: 'no server name: the oldest placed', placed: [shop, wildcard, oldest], serverName: undefined, expect: { kind: 'fallback', id: 'oldest' } },
  { rule: 'an empty server name is no server name', placed: [shop, oldest], serverName: '', expect: { kind: 'fallback', id: 'oldest' } },
  { rule: 'a name nobody carries: the oldest placed', placed: [shop, wildcard, oldest], serverName: 'nobody.example.net', expect: { kind: 'fallback', id: 'oldest' } },
  { rule: 'the fallback is the oldest placed even when expired', placed: [shop, shopExpired], serverName: undefined, expect: { kind: 'fallback', id: 'shop-expired' } },
  { rule: 'equal placement: the id settles it', placed: [cert('b', ['b.test'], NOW + DAY, 5), cert('a', ['a.test'], NOW + DAY, 5)], serverName: undefined, expect: { kind: 'fallback', id: 'a' } },
  { rule: 'equal validity among matches: the oldest placed', placed: [cert('late', ['x.test'], NOW + DAY, 9), cert('early', ['x.test'], NOW + DAY, 3)], serverName: 'x.test', expect: { kind: 'match', id: 'early' } },
  { rule: 'nothing placed: none, serving nothing', placed: [], serverName: 'shop.example.com', expect: { kind: 'none', served: [] } },
  { rule: 'nothing placed and no server name: none', placed: [], serverName: undefined, expect: { kind: 'none', served: [] } },
];

for (const row of table) {
  test(`choice: ${row.rule}`, () => {
    const choice = chooseCertificate(row.placed, row.serverName, NOW);
    if (row.expect.kind === 'none') {
      assert.deepEqual(choice, { kind: 'none', served: row.expect.served });
      assert.equal(describeServed(row.expect.served), 'no certificate is placed on this plane; it serves nothing over HTTPS');
    } else {
      const chosen = choice.kind === 'none' ? undefined : { kind: choice.kind, id: choice.cert.id };
      assert.deepEqual(chosen, row.expect);
    }
  });
}

test('the chooser keeps the caller\'s type and does not reorder its list', () => {
  const placed = [{ ...shop, context: 'ctx-shop' }, { ...shopLonger, context: 'ctx-longer' }];
  const choice = chooseCertificate(placed, 'shop.example.com', NOW);
  assert.equal(choice.kind === 'match' ? choice.cert.context : undefined, 'ctx-longer');
  assert.deepEqual(placed.map((c) => c.id), ['shop', 'shop-longer']);
});

test('describeServed names what the plane serves, once each, the first ten', () => {
  assert.equal(describeServed(servedNames([wildcard, shop, shopLonger])), 'this plane serves *.example.com, shop.example.com, www.example.com');
  assert.equal(describeServed(['A.example.com', 'a.example.com.', '*.b.example.com']), 'this plane serves a.example.com, *.b.example.com');
  const many = Array.from({ length: 13 }, (_, i) => `n${i}.example.com`);
  assert.equal(describeServed(many), `this plane serves ${many.slice(0, 10).join(', ')} and 3 more`);
  assert.equal(describeServed([]), 'no certificate is placed on this plane; it serves nothing over HTTPS');
});
