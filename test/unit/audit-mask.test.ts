import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BODY_MAX_BYTES, bodySecretTest, dataUriSummary, mask, maskBody, MASK } from '../../src/core/audit/mask.ts';

test('fields named for secrets become *** whatever they hold; null stays null', () => {
  const masked = mask({
    name: 'alice', password: 'hunter2-hunter2', clientSecret: { a: 1 }, apiTOKEN: 42, passwordHash: ['x'],
    resetToken: null, roles: ['ops'],
  });
  assert.deepEqual(masked, {
    name: 'alice', password: MASK, clientSecret: MASK, apiTOKEN: MASK, passwordHash: MASK, resetToken: null, roles: ['ops'],
  });
});

test('masking reaches depth 5 inside arrays and leaves the input unchanged', () => {
  const input = { a: [{ b: [{ c: { d: [{ e: { password: 'p', keep: 'k' } }] } }] }] };
  const copy = structuredClone(input);
  assert.deepEqual(mask(input), { a: [{ b: [{ c: { d: [{ e: { password: MASK, keep: 'k' } }] } }] }] });
  assert.deepEqual(input, copy);
});

test('a data URI becomes its media type and size', () => {
  const png = `data:image/png;base64,${Buffer.alloc(12_300).toString('base64')}`;
  assert.equal(dataUriSummary(png), 'image/png, 12.3 KB');
  assert.deepEqual(mask({ theme: { logo: png } }), { theme: { logo: 'image/png, 12.3 KB' } });
  assert.equal(dataUriSummary('data:image/svg+xml;charset=utf-8;base64,PHN2Zz4='), 'image/svg+xml, 5 B');
  assert.equal(dataUriSummary('data:image/svg+xml,%3Csvg%3E'), 'image/svg+xml, 5 B');
  assert.equal(dataUriSummary(`data:image/jpeg;base64,${Buffer.alloc(2_500_000).toString('base64')}`), 'image/jpeg, 2.5 MB');
  assert.equal(dataUriSummary('https://example.test/logo.png'), undefined);
  assert.equal(dataUriSummary('the data: of the day'), undefined);
});

test('prototype-like keys stay keys and pollute nothing', () => {
  const parsed = JSON.parse('{"__proto__": {"password": "p", "polluted": true}, "constructor": {"prototype": {"token": "t"}}}') as unknown;
  const masked = mask(parsed) as Record<string, unknown>;
  assert.equal(Object.getPrototypeOf(masked), Object.prototype);
  assert.ok(Object.hasOwn(masked, '__proto__'));
  assert.deepEqual(Object.getOwnPropertyDescriptor(masked, '__proto__')?.value, { password: MASK, polluted: true });
  assert.deepEqual(masked.constructor, { prototype: { token: MASK } });
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

test('a cycle and an endless depth end in markers', () => {
  const loop: Record<string, unknown> = { name: 'x' };
  loop.self = loop;
  assert.deepEqual(mask(loop), { name: 'x', self: '[cycle]' });
  let deep: unknown = 'bottom';
  for (let i = 0; i < 100; i++) deep = [deep];
  assert.match(JSON.stringify(mask(deep)), /\[too deep\]/);
  // A value seen twice side by side is no cycle.
  const shared = { v: 1 };
  assert.deepEqual(mask({ a: shared, b: shared }), { a: { v: 1 }, b: { v: 1 } });
});

test('a body capture masks the default secret names and the operation\'s own, at any depth', () => {
  const body = {
    user: 'bob', api_key: 'k', 'X-Api-Key': 'k', pin: '1234', spin: 'kept', card: { cvv: '123', cardNumber: '4111' },
    items: [[{ nested: { deeper: { privateKey: 'pk', iban: 'FR76' } } }]],
  };
  assert.deepEqual(JSON.parse(maskBody(body, ['IBAN'])), {
    user: 'bob', api_key: MASK, 'X-Api-Key': MASK, pin: MASK, spin: 'kept', card: { cvv: MASK, cardNumber: MASK },
    items: [[{ nested: { deeper: { privateKey: MASK, iban: MASK } } }]],
  });
  assert.equal(maskBody(undefined), '');
  assert.equal(maskBody({ iban: 'FR76' }), '{"iban":"FR76"}');
});

test('a body capture is cut at 64 KB with a marker, never inside a character', () => {
  const small = maskBody({ text: 'a'.repeat(1000) });
  assert.equal(JSON.parse(small).text.length, 1000);
  // Two key lengths, so the cut falls once on a character's first byte and once on its second.
  for (const key of ['text', 'texts']) {
    const big = maskBody({ [key]: 'é'.repeat(40_000) });
    const total = Buffer.byteLength(JSON.stringify({ [key]: 'é'.repeat(40_000) }));
    assert.ok(Buffer.byteLength(big) <= BODY_MAX_BYTES, `${Buffer.byteLength(big)} bytes`);
    assert.ok(Buffer.byteLength(big) > BODY_MAX_BYTES - 100);
    assert.ok(big.endsWith(`…[cut: ${total} bytes in all]`), big.slice(-60));
    assert.ok(!big.includes('\uFFFD'));
  }
});

test('a body\'s short secret names count as words of a longer name, and common parts as parts', () => {
  const secret = bodySecretTest();
  for (const name of ['passcode', 'pinCode', 'otp_code', 'cvv2', 'creditCardNumber', 'card-number', 'accessKey', 'AWS_ACCESS_KEY_ID', 'PIN', 'x-auth', 'X-Auth-Key', 'authCode']) {
    assert.equal(secret(name), true, name);
  }
  for (const name of ['shipping', 'footprint', 'panel', 'mapping', 'spinner', 'opinion', 'amount', 'name', 'author', 'authority']) {
    assert.equal(secret(name), false, name);
  }
});

test('the name test remembers its answers per list of secret fields, and the lists do not mix', () => {
  const plain = bodySecretTest();
  const withSku = bodySecretTest(['sku']);
  assert.equal(bodySecretTest(['sku']), withSku, 'one test per list');
  // Asked twice, in both orders: an answer remembered by one list is never the other's.
  for (let round = 0; round < 2; round++) {
    assert.equal(withSku('SKU'), true);
    assert.equal(plain('SKU'), false);
    assert.equal(plain('pinCode'), true);
    assert.equal(withSku('pinCode'), true);
  }
  // A list whose one entry holds what joins two others is still its own list.
  assert.equal(bodySecretTest(['a', 'b'])('a'), true);
  assert.equal(bodySecretTest(['a,b'])('a'), false);
  // Past its memory the test still answers (a body of many distinct keys).
  for (let i = 0; i < 5_000; i++) assert.equal(plain(`field${i}`), false);
  assert.equal(plain('password'), true);
  assert.deepEqual(JSON.parse(maskBody({ sku: 'MK-7', ['__proto__']: { token: 'x' } }, ['sku'])), { sku: '***', ['__proto__']: { token: '***' } });
});
