/** Calls the scheduling tests share: the internal plane with a schedules token, the test clock. */
import assert from 'node:assert/strict';
import { call, type Answer } from './http.ts';

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
