import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ERRORS, GatewayError, problemOf } from '../../src/http/errors.ts';

test('every error code is documented in docs/errors.md with its status', () => {
  const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
  for (const [code, def] of Object.entries(ERRORS)) {
    const row = doc.split('\n').find((l) => l.startsWith(`| \`${code}\` |`));
    assert.ok(row, `docs/errors.md has no row for ${code}`);
    assert.match(row, new RegExp(`\\| ${def.status} \\|`), `${code}: documented status differs from ${def.status}`);
  }
  const documented = [...doc.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]);
  for (const code of documented) assert.ok(code! in ERRORS, `docs/errors.md documents ${code}, which the gateway does not have`);
});

test('every error sentence is a sentence and statuses are 4xx/5xx', () => {
  for (const [code, def] of Object.entries(ERRORS)) {
    assert.ok(def.status >= 400 && def.status < 600, code);
    assert.match(def.detail, /^[A-Z].*[.!]$/, `${code}: "${def.detail}"`);
  }
});

test('a problem document carries type, title, status, detail, code and field', () => {
  const p = problemOf(new GatewayError('field.invalid', 'name must be a string.', 'name'));
  assert.deepEqual(p, {
    type: 'urn:meerkat:problem:field.invalid', title: 'Invalid field', status: 400,
    detail: 'name must be a string.', code: 'field.invalid', field: 'name',
  });
});
