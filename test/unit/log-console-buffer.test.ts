import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUFFER_LINES, ConsoleBuffer, type ConsoleLine } from '../../src/log/console-buffer.ts';
import type { LogRecord } from '../../src/log/record.ts';
import type { LogLevel } from '../../src/settings/settings.ts';

const record = (msg: string, level: LogLevel = 'info', attrs: Record<string, unknown> = {}): LogRecord => ({
  time: new Date(Date.UTC(2026, 0, 1) + msg.length).toISOString(), type: 'app', level, msg, attrs,
});

const messages = (lines: readonly ConsoleLine[]) => lines.map((l) => l.message);

test('the console buffer holds 5,000 lines (spec 8)', () => {
  assert.equal(BUFFER_LINES, 5_000);
});

test('a line keeps the record\'s time, level, message and attributes, and names the node', () => {
  const b = new ConsoleBuffer('node-a');
  b.add({ time: '2026-01-01T00:00:00.000Z', type: 'app', level: 'warn', msg: 'disk low', attrs: { free: '2%' } });
  assert.deepEqual(b.lines(), [{ seq: 1, time: '2026-01-01T00:00:00.000Z', level: 'warn', message: 'disk low', attrs: { free: '2%' }, node: 'node-a' }]);
});

test('the ring keeps the last 5,000 lines, oldest first, with seq increasing by one', () => {
  const b = new ConsoleBuffer('node-a');
  assert.deepEqual(b.lines(), []);
  for (let i = 1; i <= 5_200; i++) b.add(record(`line ${i}`));
  const lines = b.lines();
  assert.equal(lines.length, 5_000);
  assert.equal(lines[0]!.message, 'line 201');
  assert.equal(lines.at(-1)!.message, 'line 5200');
  for (let i = 0; i < lines.length; i++) {
    assert.equal(lines[i]!.message, `line ${201 + i}`);
    assert.equal(lines[i]!.seq, 201 + i);
  }
  assert.equal(b.lines({ q: 'line 200' }).some((l) => l.message === 'line 200'), false, 'the oldest lines are gone');
});

test('before the ring is full, every line is there in order', () => {
  const b = new ConsoleBuffer('n');
  for (let i = 1; i <= 3; i++) b.add(record(`m${i}`));
  assert.deepEqual(messages(b.lines()), ['m1', 'm2', 'm3']);
});

test('a level floor keeps that level and the ones above it', () => {
  const b = new ConsoleBuffer('n');
  const levels: LogLevel[] = ['debug', 'info', 'warn', 'error', 'debug', 'error', 'info'];
  levels.forEach((level, i) => b.add(record(`${level}-${i}`, level)));
  assert.deepEqual(messages(b.lines({ level: 'debug' })), levels.map((l, i) => `${l}-${i}`));
  assert.deepEqual(messages(b.lines({ level: 'info' })), ['info-1', 'warn-2', 'error-3', 'error-5', 'info-6']);
  assert.deepEqual(messages(b.lines({ level: 'warn' })), ['warn-2', 'error-3', 'error-5']);
  assert.deepEqual(messages(b.lines({ level: 'error' })), ['error-3', 'error-5']);
});

test('q is looked for case-insensitively in the message and in the attributes\' names and values', () => {
  const b = new ConsoleBuffer('n');
  b.add(record('Upstream DOWN for orders'));
  b.add(record('certificate renewed', 'info', { Domain: 'shop.example' }));
  b.add(record('route reloaded', 'info', { route: 'Billing', count: 42 }));
  b.add(record('nothing to see'));
  assert.deepEqual(messages(b.lines({ q: 'upstream down' })), ['Upstream DOWN for orders']);
  assert.deepEqual(messages(b.lines({ q: 'SHOP.EXAMPLE' })), ['certificate renewed'], 'an attribute value');
  assert.deepEqual(messages(b.lines({ q: 'domain' })), ['certificate renewed'], 'an attribute name');
  assert.deepEqual(messages(b.lines({ q: 'billing' })), ['route reloaded']);
  assert.deepEqual(messages(b.lines({ q: '42' })), ['route reloaded'], 'a value that is not a string');
  assert.deepEqual(messages(b.lines({ q: 'absent-word' })), []);
  assert.equal(b.lines({ q: '  ' }).length, 4, 'a blank search selects everything');
});

test('level and q together; limit keeps the newest of what matches, oldest first', () => {
  const b = new ConsoleBuffer('n');
  for (let i = 1; i <= 20; i++) b.add(record(`${i % 2 === 0 ? 'even' : 'odd'} ${i}`, i % 4 === 0 ? 'warn' : 'info'));
  assert.deepEqual(messages(b.lines({ limit: 3 })), ['even 18', 'odd 19', 'even 20']);
  assert.deepEqual(messages(b.lines({ q: 'even', limit: 2 })), ['even 18', 'even 20']);
  assert.deepEqual(messages(b.lines({ level: 'warn', q: 'even', limit: 3 })), ['even 12', 'even 16', 'even 20']);
  assert.deepEqual(b.lines({ limit: 0 }), []);
  assert.equal(b.lines({ limit: 1_000_000 }).length, 20);
});

test('limit keeps the newest after the ring wrapped', () => {
  const b = new ConsoleBuffer('n');
  for (let i = 1; i <= 5_100; i++) b.add(record(`line ${i}`));
  assert.deepEqual(messages(b.lines({ limit: 2 })), ['line 5099', 'line 5100']);
  assert.equal(b.lines({ limit: 6_000 }).length, 5_000);
});

test('a follower sees each new line until it unfollows; a failing follower does not stop the others', () => {
  const b = new ConsoleBuffer('n');
  b.add(record('before'));
  const seen: ConsoleLine[] = [];
  const stop = b.follow((line) => seen.push(line));
  b.follow(() => {
    throw new Error('socket closed');
  });
  b.add(record('one', 'debug'));
  b.add(record('two', 'error', { k: 'v' }));
  stop();
  b.add(record('three'));
  assert.deepEqual(seen.map((l) => [l.seq, l.message, l.level]), [[2, 'one', 'debug'], [3, 'two', 'error']]);
  assert.deepEqual(seen[1]!.attrs, { k: 'v' });
  assert.deepEqual(messages(b.lines()), ['before', 'one', 'two', 'three']);
});

test('seq keeps increasing past the ring\'s size', () => {
  const b = new ConsoleBuffer('n', 4);
  for (let i = 0; i < 10; i++) b.add(record(`m${i}`));
  assert.deepEqual(b.lines().map((l) => l.seq), [7, 8, 9, 10]);
});

test('a line holds plain JSON values: a BigInt or a circular attribute cannot break an answer or the feed', () => {
  const loop: Record<string, unknown> = {};
  loop.self = loop;
  const buffer = new ConsoleBuffer('node-a');
  buffer.add({ time: '2026-11-24T00:00:00.000Z', type: 'app', level: 'info', msg: 'odd', attrs: { big: 7n, loop } });
  const [line] = buffer.lines({ q: 'circular' });
  assert.ok(line);
  assert.doesNotThrow(() => JSON.stringify(line));
  assert.deepEqual(line.attrs, { big: '7', loop: { self: '[circular]' } });
});
