import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock/clock.ts';
import { LevelControl, REVERT_AFTER_MS, type LevelChange } from '../../src/log/level-control.ts';
import { LogHub, type LogRecord } from '../../src/log/logger.ts';
import type { LogLevel } from '../../src/settings/settings.ts';

const START = Date.UTC(2026, 2, 1, 9, 0, 0);
const MINUTE = 60_000;

function node(startup: LogLevel = 'info', startedAt = START) {
  const clock = new ManualClock(startedAt);
  const hub = new LogHub(startup);
  const records: LogRecord[] = [];
  hub.addSink((r) => records.push(r));
  const moves: LogLevel[] = [];
  hub.onLevel((level) => moves.push(level));
  const control = new LevelControl(hub, startup, clock.now(), clock, hub.logger());
  return { clock, hub, control, records, moves };
}

const change = (level: LogLevel, at: number, by = 'account:root'): LevelChange => ({ level, at, by });

test('a temporary level reverts after 30 minutes (spec 8)', () => {
  assert.equal(REVERT_AFTER_MS, 30 * MINUTE);
});

test('a level more talkative than the startup one returns to it after exactly 30 minutes on the clock', () => {
  const { clock, hub, control, moves } = node('info');
  clock.advance(5 * MINUTE);
  const at = clock.now();
  control.apply(change('debug', at));
  assert.equal(hub.level, 'debug');
  assert.deepEqual(control.state(), { level: 'debug', startupLevel: 'info', revertsAt: at + 30 * MINUTE });
  clock.advance(30 * MINUTE - 1);
  assert.equal(hub.level, 'debug');
  assert.equal(control.state().revertsAt, at + 30 * MINUTE);
  clock.advance(1);
  assert.equal(hub.level, 'info');
  assert.deepEqual(control.state(), { level: 'info', startupLevel: 'info', revertsAt: null });
  assert.deepEqual(moves, ['debug', 'info']);
});

test('the 30 minutes count from when the level was set, not from when this node heard of it', () => {
  const { clock, hub, control } = node('warn');
  const at = clock.now() + MINUTE;
  clock.advance(11 * MINUTE);
  control.apply(change('info', at));
  assert.equal(hub.level, 'info');
  assert.equal(control.state().revertsAt, at + 30 * MINUTE);
  clock.set(at + 30 * MINUTE - 1);
  assert.equal(hub.level, 'info');
  clock.advance(1);
  assert.equal(hub.level, 'warn');
});

test('a more talkative change heard after its 30 minutes leaves the startup level in place', () => {
  const { clock, hub, control, moves } = node('info');
  const at = clock.now() + MINUTE;
  clock.set(at + 30 * MINUTE);
  control.apply(change('debug', at));
  assert.equal(hub.level, 'info');
  assert.equal(control.state().revertsAt, null);
  assert.deepEqual(moves, []);
});

test('a level less talkative than the startup one never reverts', () => {
  const { clock, hub, control, moves } = node('info');
  control.apply(change('error', clock.now()));
  assert.equal(hub.level, 'error');
  assert.equal(control.state().revertsAt, null);
  clock.advance(24 * 60 * MINUTE);
  assert.equal(hub.level, 'error');
  assert.deepEqual(moves, ['error']);
});

test('the startup level set explicitly never reverts and moves nothing', () => {
  const { clock, hub, control, moves } = node('debug');
  control.apply(change('debug', clock.now()));
  assert.equal(control.state().revertsAt, null);
  clock.advance(31 * MINUTE);
  assert.equal(hub.level, 'debug');
  assert.deepEqual(moves, []);
});

test('the change found stored at start is left aside: a restart returns to the startup level', () => {
  const { clock, hub, control, moves } = node('info');
  control.apply(change('debug', START - 1));
  assert.equal(hub.level, 'info');
  assert.equal(control.state().revertsAt, null);
  control.apply(change('debug', START - 1));
  clock.advance(31 * MINUTE);
  assert.equal(hub.level, 'info');
  assert.deepEqual(moves, []);
  // A change made at the very moment the node started is its own.
  control.apply(change('warn', START));
  assert.equal(hub.level, 'warn');
});

test('a later change applies even when the clock of the node that made it is behind this one\'s', () => {
  // The other node's clock runs 5 s behind: its changes are dated before this node's start.
  const { clock, hub, control, moves } = node('info');
  const behind = (ms: number) => clock.now() - 5_000 + ms;
  control.apply(null);
  clock.advance(1_000);
  control.apply(change('error', behind(0), 'account:other'));
  assert.equal(hub.level, 'error', 'a change made after this node started, by a clock behind');
  clock.advance(1_000);
  control.apply(change('warn', behind(0), 'account:other'));
  assert.equal(hub.level, 'warn', 'and the next one: never back to the startup level');
  assert.deepEqual(moves, ['error', 'warn']);
});

test('a change this node found at start is applied when its own clock dates it after the start (made during boot)', () => {
  const { hub, control } = node('info');
  control.apply(change('error', START + 10));
  assert.equal(hub.level, 'error');
});

test('the same change applied again does nothing: the countdown is not re-armed', () => {
  const { clock, hub, control, moves, records } = node('info');
  const first = change('debug', clock.now());
  control.apply(first);
  const revertsAt = control.state().revertsAt;
  const said = records.length;
  clock.advance(20 * MINUTE);
  control.apply({ ...first });
  control.apply(first);
  assert.equal(control.state().revertsAt, revertsAt);
  assert.equal(records.length, said, 'nothing said again');
  clock.advance(10 * MINUTE);
  assert.equal(hub.level, 'info', 'reverted at the first change\'s 30 minutes');
  // Still the same change in later snapshots: the level stays where it returned.
  control.apply({ ...first });
  assert.equal(hub.level, 'info');
  assert.deepEqual(moves, ['debug', 'info']);
});

test('a new change restarts the countdown from its own date', () => {
  const { clock, hub, control } = node('info');
  control.apply(change('debug', clock.now()));
  clock.advance(20 * MINUTE);
  const again = clock.now();
  control.apply(change('debug', again, 'account:ops'));
  assert.equal(control.state().revertsAt, again + 30 * MINUTE);
  clock.advance(10 * MINUTE);
  assert.equal(hub.level, 'debug', 'the first countdown was cancelled');
  clock.advance(20 * MINUTE - 1);
  assert.equal(hub.level, 'debug');
  clock.advance(1);
  assert.equal(hub.level, 'info');
});

test('a less talkative change cancels a running countdown', () => {
  const { clock, hub, control } = node('info');
  control.apply(change('debug', clock.now()));
  clock.advance(MINUTE);
  control.apply(change('warn', clock.now()));
  assert.equal(hub.level, 'warn');
  assert.equal(control.state().revertsAt, null);
  clock.advance(60 * MINUTE);
  assert.equal(hub.level, 'warn');
});

test('a snapshot without a change returns to the startup level', () => {
  const { clock, hub, control } = node('info');
  control.apply(change('error', clock.now()));
  control.apply(null);
  assert.equal(hub.level, 'info');
  control.apply(change('debug', clock.now()));
  control.apply(null);
  assert.equal(hub.level, 'info');
  assert.equal(control.state().revertsAt, null);
  clock.advance(31 * MINUTE);
  assert.equal(hub.level, 'info');
});

test('watchers of the hub are told each move; the change and the revert are logged', () => {
  const { clock, hub, control, records } = node('info');
  const told: LogLevel[] = [];
  const stop = hub.onLevel((l) => told.push(l));
  control.apply(change('debug', clock.now(), 'account:alice'));
  clock.advance(30 * MINUTE);
  assert.deepEqual(told, ['debug', 'info']);
  const set = records.find((r) => r.msg === 'operational log level set');
  assert.ok(set);
  assert.equal(set.attrs.to, 'debug');
  assert.equal(set.attrs.by, 'account:alice');
  assert.equal(set.attrs.revertsAt, new Date(START + 30 * MINUTE).toISOString());
  assert.ok(records.some((r) => r.msg.includes('returned to its startup level') && r.attrs.to === 'info'));
  stop();
  control.apply(change('warn', clock.now()));
  assert.deepEqual(told, ['debug', 'info']);
});

test('a level turned down still records who turned it down', () => {
  const { clock, control, records } = node('info');
  control.apply(change('error', clock.now(), 'account:bob'));
  const set = records.find((r) => r.msg === 'operational log level set');
  assert.ok(set);
  assert.equal(set.attrs.by, 'account:bob');
});

test('a level turned up from warn is said at the new level: its line is not dropped', () => {
  const { clock, hub, control, records } = node('warn');
  control.apply(change('info', clock.now(), 'account:carol'));
  assert.equal(hub.level, 'info');
  // The hub's sinks see only what passes its level, as the outputs do.
  const set = records.filter((r) => r.msg === 'operational log level set');
  assert.equal(set.length, 1);
  assert.deepEqual([set[0]!.attrs.to, set[0]!.attrs.by], ['info', 'account:carol']);
  assert.equal('level' in set[0]!.attrs, false, 'no attribute named like the line\'s own level');
});

test('close cancels the countdown', () => {
  const { clock, hub, control } = node('info');
  control.apply(change('debug', clock.now()));
  control.close();
  clock.advance(31 * MINUTE);
  assert.equal(hub.level, 'debug');
  assert.equal(control.state().revertsAt, null);
});

test('a node at warn records who moved its level, each way, and its return to the startup level', () => {
  const { clock, control, records } = node('warn');
  const said = () => records.filter((r) => /level/.test(r.msg)).map((r) => `${r.level} ${r.msg} ${String(r.attrs.to)}`);
  control.apply(change('error', clock.now()));
  control.apply(change('warn', clock.now() + 1));
  control.apply(change('info', clock.now() + 2));
  clock.advance(31 * MINUTE);
  assert.deepEqual(said(), [
    'warn operational log level set error',
    'warn operational log level set warn',
    'info operational log level set info',
    'info the operational log level returned to its startup level warn',
  ]);
});
