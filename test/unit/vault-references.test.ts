import { test } from 'node:test';
import assert from 'node:assert/strict';
import { referencedNames, resolveReferences } from '../../src/core/vault/references.ts';

test('${name} and $name are resolved; unknown names go out verbatim', () => {
  const vault = new Map([['stripe_key', 'sk_live_1'], ['user', 'svc']]);
  const look = (n: string) => vault.get(n);
  assert.equal(resolveReferences('Bearer ${stripe_key}', look), 'Bearer sk_live_1');
  assert.equal(resolveReferences('$user:${stripe_key}', look), 'svc:sk_live_1');
  assert.equal(resolveReferences('$typo and ${missing}', look), '$typo and ${missing}');
  assert.equal(resolveReferences('price $5 and $', look), 'price $5 and $');
  // An unclosed brace is not a reference.
  assert.deepEqual(referencedNames('${a} $b ${c'), ['a', 'b']);
});

test('a resolution past its limit stops: null, and nothing longer than the limit is built', () => {
  const look = (n: string) => (n === 'k' ? 'x'.repeat(10) : undefined);
  assert.equal(resolveReferences('a$k', look, 11), 'axxxxxxxxxx', 'exactly the limit');
  assert.equal(resolveReferences('a$k', look, 10), null);
  assert.equal(resolveReferences('$k-', look, 10), null, 'the tail counts too');
  assert.equal(resolveReferences('$typo', look, 5), '$typo', 'an unknown name counts as written');
  assert.equal(resolveReferences('$typo', look, 4), null);
  // Thousands of references to a large value: refused at once, never built.
  const many = '$k'.repeat(4096);
  const lookups: string[] = [];
  assert.equal(resolveReferences(many, (n) => { lookups.push(n); return 'y'.repeat(65_536); }, 131_072), null);
  assert.equal(lookups.length, 3, 'stopped at the third reference');
});
