/**
 * The media type a scheduled call's body goes with (spec 2.1, contentType: "explicit wins"): the
 * `contentType` field first, then a `Content-Type` among the headers, then the body's own (JSON,
 * or text for a string).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { internalWith, schedulingStand, schedulesToken } from '../helpers/scheduler.ts';
import { until } from '../helpers/until.ts';
import type { TestGateway } from '../helpers/gateway.ts';
import type { Admin } from '../helpers/admin.ts';
import type { Upstream } from '../helpers/upstream.ts';

let t: TestGateway;
let root: Admin;
let up: Upstream;
let token: string;

before(async () => {
  ({ t, up, root } = await schedulingStand());
  assert.equal((await root.put('/api/routes/jobs', { upstream: `${up.origin}/svc`, paths: ['/jobs'], rule: null })).status, 201);
  token = await schedulesToken(root, 'jobs-svc', ['jobs'], []);
});
after(async () => {
  await t?.close();
  await up?.close();
});

const internal = internalWith(() => t.url('internal'), () => token);

async function typeSent(path: string, fields: Record<string, unknown>): Promise<string | undefined> {
  const made = await internal('POST', '/api/schedules', { routeId: 'jobs', path, every: 'PT1H', ...fields });
  assert.equal(made.status, 201, made.text);
  await internal('POST', `/api/schedules/${made.json.id}/run`);
  const request = await until(() => up.requests.find((r) => r.url.endsWith(path)), `the call to ${path}`);
  return request.headers['content-type'] as string | undefined;
}

test('contentType, then a Content-Type header, then the body\'s own type', async () => {
  assert.equal(await typeSent('/jobs/json', { body: { a: 1 } }), 'application/json');
  assert.equal(await typeSent('/jobs/text', { body: 'hello' }), 'text/plain; charset=utf-8');
  assert.equal(await typeSent('/jobs/header', { body: { a: 1 }, headers: { 'Content-Type': 'application/vnd.api+json' } }), 'application/vnd.api+json');
  assert.equal(await typeSent('/jobs/both', { body: { a: 1 }, contentType: 'application/merge-patch+json', headers: { 'content-type': 'application/vnd.api+json' } }), 'application/merge-patch+json');
});
