import { test } from 'node:test';
import assert from 'node:assert/strict';
import { summarise } from '../../src/core/audit/summary.ts';

test('counts come first, then the names added, updated and removed, then the settings that moved', () => {
  assert.equal(
    summarise({ added: ['route orders', 'role ops'], updated: ['account alice'], removed: [], settings: ['logs.level'] }),
    '2 added, 1 updated, 0 removed, 1 settings field moved. Added: route orders, role ops. Updated: account alice. Settings moved: logs.level.',
  );
  assert.equal(summarise({}), '0 added, 0 updated, 0 removed.');
  assert.equal(summarise({ removed: ['route a', 'route b'] }), '0 added, 0 updated, 2 removed. Removed: route a, route b.');
  assert.equal(summarise({ settings: ['a', 'b'] }), '0 added, 0 updated, 0 removed, 2 settings fields moved. Settings moved: a, b.');
});

test('at most 80 names are written in all, the rest counted once', () => {
  const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
  const line = summarise({ added: names('a', 50), updated: names('u', 40), removed: names('r', 10) });
  assert.ok(line.startsWith('50 added, 40 updated, 10 removed. '));
  const written = [...line.matchAll(/\b[aur]\d+\b/g)].length;
  assert.equal(written, 80);
  assert.ok(line.endsWith('Updated: u0, ' + names('u', 30).slice(1).join(', ') + ' and 20 more.'), line.slice(-80));
  assert.ok(!line.includes('Removed:'));

  const exact = summarise({ added: names('a', 80) });
  assert.ok(!exact.includes('more'));
  assert.equal([...exact.matchAll(/\ba\d+\b/g)].length, 80);

  const over = summarise({ added: names('a', 81) });
  assert.ok(over.endsWith('a79 and 1 more.'));

  const cutBetween = summarise({ added: names('a', 80), removed: ['r0', 'r1'] });
  assert.ok(cutBetween.endsWith('a79 and 2 more.'), cutBetween.slice(-40));
});
