import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UpstreamHealth } from '../../src/pipeline/upstream-health.ts';
import { GatewayError } from '../../src/http/errors.ts';

test('a service down is said once, its return once with the failures in between; other failures say nothing', () => {
  const said: Array<[string, string, Record<string, unknown>]> = [];
  const health = new UpstreamHealth((state, origin, detail) => said.push([state, origin, detail]));
  const a = 'http://a.internal:8080';
  health.answered(a);
  health.failed(a, new GatewayError('upstream.failed', 'broke off'));
  assert.deepEqual(said, [], 'an answer broken off is not a service down');
  health.failed(a, new GatewayError('upstream.unreachable', 'connection refused'));
  health.failed(a, new GatewayError('upstream.timeout', 'no answer'));
  health.failed(a, new GatewayError('upstream.unreachable', 'connection refused'));
  health.failed('http://b.internal', new GatewayError('upstream.untrusted', 'untrusted'));
  health.answered(a);
  health.answered(a);
  assert.deepEqual(said, [
    ['down', a, { code: 'upstream.unreachable', reason: 'connection refused' }],
    ['down', 'http://b.internal', { code: 'upstream.untrusted', reason: 'untrusted' }],
    ['back', a, { failures: 3 }],
  ]);
});

test('a report that throws never breaks a call', () => {
  const health = new UpstreamHealth(() => { throw new Error('sink broken'); });
  assert.doesNotThrow(() => health.failed('http://a', new GatewayError('upstream.timeout')));
  assert.doesNotThrow(() => health.answered('http://a'));
});
