import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { SETTINGS_DOC } from '../../src/settings/settings.ts';

test('README documents every setting the gateway reads, and no other', () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const rows = [...readme.matchAll(/^\| `(GATEWAY_[A-Z_]+)` \| ([^|]+) \|/gm)].map((m) => [m[1], m[2]!.trim()]);
  assert.deepEqual(rows.map(([n]) => n).sort(), SETTINGS_DOC.map(([n]) => n).sort());
  for (const [name, def] of SETTINGS_DOC) {
    assert.equal(rows.find(([n]) => n === name)?.[1], def, `${name}: README default differs`);
  }
});
