/**
 * The placement rules judged for a file-system pair renewed on disk (spec 1.2 rules 4, 10, 20): a
 * renewal cannot replace anyone, so any name another certificate answers on one of its planes holds
 * it back, and on the internal plane it must keep a name the services call the plane by.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clash, renewalProblem } from '../../src/actors/certs/placement-rules.ts';
import type { Placement } from '../../src/actors/certs/messages.ts';

const certs = new Map([
  ['files', { id: 'files', name: 'files', names: ['api.example.test'] }],
  ['other', { id: 'other', name: 'Other', names: ['www.example.test'] }],
  ['wild', { id: 'wild', name: 'Wild', names: ['*.corp.test'] }],
]);
const placed = (...p: Array<[string, Placement['plane']]>): Placement[] => p.map(([id, plane], i) => ({ id, plane, placedAt: i }));

test('a name another certificate answers on one of its planes holds the renewal back, on that plane only', () => {
  const placements = placed(['files', 'app'], ['other', 'app'], ['wild', 'console']);
  assert.equal(renewalProblem('files', ['api.example.test'], placements, certs, []), null);
  assert.match(renewalProblem('files', ['api.example.test', 'www.example.test'], placements, certs, [])!, /application plane, "Other" already answers www\.example\.test/);
  // The wildcard is placed on the console plane, where this certificate is not.
  assert.equal(renewalProblem('files', ['api.example.test', 'a.corp.test'], placements, certs, []), null);
  assert.match(renewalProblem('files', ['a.corp.test'], placed(['files', 'console'], ['wild', 'console']), certs, [])!, /"Wild" already answers a\.corp\.test/);
  // A certificate placed nowhere is judged against nothing.
  assert.equal(renewalProblem('files', ['www.example.test'], placed(['other', 'app']), certs, []), null);
});

test('on the internal plane the renewal keeps a name the services call it by', () => {
  const placements = placed(['files', 'internal']);
  assert.equal(renewalProblem('files', ['gw.internal.test'], placements, certs, ['gw.internal.test']), null);
  assert.equal(renewalProblem('files', ['*.internal.test'], placements, certs, ['gw.internal.test']), null, 'a wildcard counts');
  assert.match(renewalProblem('files', ['api.example.test'], placements, certs, ['gw.internal.test'])!, /name the services call it by \(gw\.internal\.test\)/);
  assert.match(renewalProblem('files', ['api.example.test'], placements, certs, [])!, /GATEWAY_INTERNAL_NAMES/);
});

test('overlap counts both ways', () => {
  assert.equal(clash(['*.example.test'], ['www.example.test']), '*.example.test');
  assert.equal(clash(['www.example.test'], ['*.example.test']), 'www.example.test');
  assert.equal(clash(['example.test'], ['*.example.test']), undefined);
});
