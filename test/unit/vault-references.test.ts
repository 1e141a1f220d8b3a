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
