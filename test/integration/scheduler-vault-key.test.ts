/**
 * A schedule's header names a vault value (spec 1.1 rule 27) that the node making the call cannot
 * open: its vault master key differs from the one that sealed it (a cluster node started with the
 * wrong GATEWAY_VAULT_KEY). The call is refused unsent, 503 `vault.unsealable` on the run, and
 * tried again as a 503 is; the service never receives the reference's text in place of the secret.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { signInAdmin } from '../helpers/admin.ts';
import { advanceClock, internalWith, schedulesToken } from '../helpers/scheduler.ts';
import { startUpstream, type Upstream } from '../helpers/upstream.ts';
import { until } from '../helpers/until.ts';

const KEY_A = randomBytes(32).toString('base64');
const KEY_B = randomBytes(32).toString('base64');
let first: TestGateway | undefined;
let second: TestGateway | undefined;
let up: Upstream | undefined;
after(async () => {
  await second?.close();
  await first?.close();
  await up?.close();
});

test('a vault value this node cannot open is never sent as its reference: the run fails 503 vault.unsealable', async () => {
  up = await startUpstream();
  first = await startTestGateway({ GATEWAY_VAULT_KEY: KEY_A, GATEWAY_CLOCK: 'manual' });
  const rootA = await signInAdmin(first.url('control'));
  await rootA.put('/api/vault/apikey', { value: 's3cr3t-value-of-the-service' });
  await rootA.put('/api/roles/jobs', {});
  await rootA.put('/api/routes/billing', { upstream: `${up.origin}/svc`, paths: ['/billing'], rule: { roles: ['jobs'] } });
  const token = await schedulesToken(rootA, 'billing-svc', ['billing'], ['jobs']);
  await first.gw.stop();

  // The same database, a node with another key.
  second = await startTestGateway({ GATEWAY_VAULT_KEY: KEY_B, GATEWAY_CLOCK: 'manual', GATEWAY_NODE_NAME: 'node-b' }, first.db);
  const internal = internalWith(() => second!.url('internal'), () => token);
  const made = await internal('POST', '/api/schedules', { routeId: 'billing', path: '/billing/charge', every: 'PT1H', roles: ['jobs'], headers: { 'X-Api-Key': '${apikey}' } });
  assert.equal(made.status, 201, made.text);
  await advanceClock(second.url('control'), 'PT1H');
  let seen: unknown = null;
  // 503 is tried again (10 s, then a minute on): the turn ends after its third attempt.
  const run = await until(async () => {
    await advanceClock(second!.url('control'), 'PT30S');
    const runs = (await internal('GET', `/api/schedules/${made.json.id}/runs`)).json as Array<{ state: string; status: number; detail: string; attempts?: Array<{ status: number }> }>;
    seen = { runs, schedule: (await internal('GET', `/api/schedules/${made.json.id}`)).json };
    return runs.find((r) => r.state === 'failed');
  }, 'the turn to end failed').catch((err: Error) => assert.fail(`${err.message}: ${JSON.stringify(seen)}`));
  assert.equal(run.status, 503, JSON.stringify(run));
  assert.match(run.detail, /apikey named by this schedule's headers cannot be opened with this node's vault master key; nothing was sent/);
  assert.equal(run.attempts?.length, 3, 'tried again as a 503 is');
  assert.equal(up.requests.filter((r) => r.url.includes('/charge')).length, 0, 'the service received nothing');
});
