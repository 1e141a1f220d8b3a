import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RoleView } from '../../src/core/model.ts';
import { RoleGraph, findCycle, holdsAny } from '../../src/pipeline/roles.ts';

const role = (name: string, ...implies: string[]): RoleView => ({ name, implies });

const CATALOGUE = [
  role('admin', 'editor', 'billing'),
  role('editor', 'reader'),
  role('billing', 'reader', 'invoices'),
  role('reader'),
];

test('expand adds everything implied, transitively, sorted and deduplicated', () => {
  const g = new RoleGraph(CATALOGUE);
  assert.deepEqual(g.expand(['admin']), ['admin', 'billing', 'editor', 'invoices', 'reader']);
  assert.deepEqual(g.expand(['editor']), ['editor', 'reader']);
  assert.deepEqual(g.expand(['reader', 'editor', 'editor']), ['editor', 'reader']);
  assert.deepEqual(g.expand(['invoices']), ['invoices'], 'an implied role missing from the catalogue is a leaf');
  assert.deepEqual(g.expand([]), []);
});

test('unknown roles are kept as themselves', () => {
  const g = new RoleGraph(CATALOGUE);
  assert.deepEqual(g.expand(['ghost']), ['ghost']);
  assert.deepEqual(g.expand(['zed', 'editor', 'ghost']), ['editor', 'ghost', 'reader', 'zed']);
});

test('expand is memoised per role set, whatever the input order', () => {
  const g = new RoleGraph(CATALOGUE);
  const first = g.expand(['editor', 'billing']);
  assert.equal(g.expand(['billing', 'editor']), first);
  assert.equal(g.expand(['editor', 'billing']), first);
  assert.equal(g.expand(['admin']), g.expand(['admin']));
  assert.equal(g.expand(['ghost']), g.expand(['ghost']));
  assert.ok(Object.isFrozen(first), 'a shared answer cannot be altered by one caller');
});

test('the memo stays bounded and keeps answering correctly past its limit', () => {
  const g = new RoleGraph(CATALOGUE);
  for (let i = 0; i < 25_000; i++) assert.equal(g.expand([`u${i}`, 'editor']).length, 3);
  assert.deepEqual(g.expand(['u1', 'editor']), ['editor', 'reader', 'u1']);
});

test('expand terminates on cycles, self-loops included', () => {
  const g = new RoleGraph([role('a', 'b'), role('b', 'c'), role('c', 'a', 'd'), role('s', 's')]);
  assert.deepEqual(g.expand(['b']), ['a', 'b', 'c', 'd']);
  assert.deepEqual(g.expand(['s']), ['s']);
  assert.deepEqual(g.expand(['d', 's']), ['d', 's']);
});

test('a role listed twice merges its implications', () => {
  const g = new RoleGraph([role('a', 'b'), role('a', 'c')]);
  assert.deepEqual(g.expand(['a']), ['a', 'b', 'c']);
});

test('findCycle returns a closed path, or undefined for a hierarchy', () => {
  assert.equal(findCycle(CATALOGUE), undefined);
  assert.equal(findCycle([]), undefined);
  // A diamond is not a cycle.
  assert.equal(findCycle([role('top', 'l', 'r'), role('l', 'bottom'), role('r', 'bottom'), role('bottom')]), undefined);
  assert.deepEqual(findCycle([role('a', 'a')]), ['a', 'a']);
  assert.deepEqual(findCycle([role('a', 'b'), role('b', 'a')]), ['a', 'b', 'a']);
  const found = findCycle([role('root', 'x'), role('x', 'y'), role('y', 'z'), role('z', 'x')]);
  assert.deepEqual(found, ['x', 'y', 'z', 'x']);
});

test('findCycle: every step of the returned path is a real implication', () => {
  const roles = [role('p', 'q', 'r'), role('q', 'r'), role('r', 's'), role('s', 't', 'q'), role('t')];
  const cycle = findCycle(roles);
  assert.ok(cycle !== undefined);
  assert.equal(cycle[0], cycle.at(-1));
  for (let i = 0; i + 1 < cycle.length; i++) {
    assert.ok(roles.some((r) => r.name === cycle[i] && r.implies.includes(cycle[i + 1]!)), `${cycle[i]} → ${cycle[i + 1]}`);
  }
});

test('findCycle survives a long chain without recursion', () => {
  const roles = Array.from({ length: 20_000 }, (_, i) => role(`r${i}`, `r${i + 1}`));
  assert.equal(findCycle(roles), undefined);
  const looped = [...roles, role('r20000', 'r0')];
  assert.equal(findCycle(looped)?.length, 20_002);
  assert.equal(new RoleGraph(looped).expand(['r5']).length, 20_001);
});

test('holdsAny: at least one needed role held; an empty need admits nobody', () => {
  assert.equal(holdsAny(['a', 'b'], ['c', 'b']), true);
  assert.equal(holdsAny(['a', 'b'], ['c']), false);
  assert.equal(holdsAny([], ['a']), false);
  assert.equal(holdsAny(['a'], []), false);
  assert.equal(holdsAny([], []), false);
});
