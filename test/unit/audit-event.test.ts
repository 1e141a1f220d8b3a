import { test } from 'node:test';
import assert from 'node:assert/strict';
import { actorText, AUDIT_PARTS, clip, TARGET_KINDS } from '../../src/core/audit/event.ts';

test('the actor reads as the account, via the token when a token acted', () => {
  assert.equal(actorText({ account: 'alice' }), 'alice');
  assert.equal(actorText({ account: 'deploy-bot', token: 'ci-pipeline' }), 'deploy-bot, via ci-pipeline');
  assert.equal(actorText(null), '');
});

test('the parts and target kinds are distinct, and console sign-ins have their own kind', () => {
  assert.deepEqual([...AUDIT_PARTS], ['changes', 'security', 'operations']);
  assert.equal(new Set(TARGET_KINDS).size, TARGET_KINDS.length);
  for (const kind of ['route', 'role', 'account', 'console', 'token', 'organisation', 'vault', 'settings', 'schedule', 'certificate']) {
    assert.ok((TARGET_KINDS as readonly string[]).includes(kind), kind);
  }
});

test('a typed name is clipped on whole characters, never refused', () => {
  assert.equal(clip('alice'), 'alice');
  const long = '🦊'.repeat(300);
  const clipped = clip(long);
  assert.equal(Array.from(clipped).length, 200);
  assert.ok(clipped.endsWith('…'));
  assert.ok(!clipped.includes('\uFFFD'));
  assert.equal(clip('abcdef', 4), 'abc…');
});
