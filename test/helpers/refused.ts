/** A refusal as the tests of the TLS settings expect it: the status and the stable code, with what was tried. */
import assert from 'node:assert/strict';
import type { Answer } from './http.ts';

export function refused(a: Answer, status: number, code: string, what: string): void {
  assert.equal(a.status, status, `${what}: ${a.status} ${a.text}`);
  assert.equal(a.json?.code, code, `${what}: ${a.text}`);
}
