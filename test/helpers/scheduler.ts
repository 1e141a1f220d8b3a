/** Calls the scheduling tests share: the internal plane with a schedules token, the test clock. */
import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { call, type Answer } from './http.ts';
import { startTestGateway, type TestGateway } from './gateway.ts';
import { startUpstream, type Upstream } from './upstream.ts';
import { signInAdmin, type Admin } from './admin.ts';

/** A caller of the internal plane's scheduling API with one schedules token. */
export function internalWith(internalUrl: () => string, token: () => string) {
  return (method: string, path: string, body?: unknown): Promise<Answer> =>
    call(`${internalUrl()}${path}`, { method, headers: { authorization: `Bearer ${token()}` }, ...(body !== undefined ? { body } : {}) });
}

/** Moves a gateway's test clock (`POST /__clock/advance`); returns its new now, epoch ms. */
export async function advanceClock(controlUrl: string, by: string): Promise<number> {
  const a = await call(`${controlUrl}/__clock/advance`, { method: 'POST', body: { by } });
  assert.equal(a.status, 200, a.text);
  return a.json.now as number;
}

/** What every scheduling test starts from: a gateway on the test clock, an upstream, root signed in. */
export interface SchedulingStand {
  readonly t: TestGateway;
  readonly up: Upstream;
  readonly root: Admin;
}

export async function schedulingStand(): Promise<SchedulingStand> {
  const t = await startTestGateway({ GATEWAY_CLOCK: 'manual' });
  const up = await startUpstream();
  const root = await signInAdmin(t.url('control'));
  return { t, up, root };
}

/** Mints a schedules token within `routes`, `roles` and `organisations` (none by default); returns its secret. */
export async function schedulesToken(root: Admin, name: string, routes: string[], roles: string[], organisations: string[] = []): Promise<string> {
  const minted = await root.post('/api/tokens', { name, kind: 'schedules', routes, roles, organisations });
  assert.equal(minted.status, 201, minted.text);
  return minted.json.token as string;
}

/**
 * A test file's stand: opened before its tests, closed after them. `prepare` adds what the
 * file's tests share (routes, tokens); every field is there once `before` has run.
 */
export function useSchedulingStand<X extends object>(prepare: (stand: SchedulingStand) => Promise<X>): SchedulingStand & X {
  const stand = {} as SchedulingStand & X;
  before(async () => {
    const opened = await schedulingStand();
    Object.assign(stand, opened, await prepare(opened));
  });
  after(async () => {
    await stand.t?.close();
    await stand.up?.close();
  });
  return stand;
}
