/**
 * The live feeds' slow-reader rule on both kinds of door (docs/live.md "Slow readers"; CONTRACT.md
 * "Live feeds": wss works as ws does): a reader that stops reading while lines pour in is closed
 * with 1013 and a reason once more than 1 MiB waits; `hello` is sent whatever its size, and a
 * reader still taking in a hello of several megabytes is not closed for the first line after it.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { startTestGateway, ROOT_PASSWORD, type TestGateway } from '../helpers/gateway.ts';
import { signInAdmin, type Admin } from '../helpers/admin.ts';
import { signInHttps } from '../helpers/https.ts';
import { until } from '../helpers/until.ts';

let t: TestGateway;
let root: Admin;
let httpsPort: number;
let httpsSession: Record<string, string>;

before(async () => {
  t = await startTestGateway({ GATEWAY_LOG_LEVEL: 'info' });
  root = await signInAdmin(t.url('control'));
  const cert = await root.post('/api/certificates', { source: 'self-signed', names: ['localhost'] });
  assert.equal(cert.status, 201, cert.text);
  assert.equal((await root.put(`/api/certificates/${cert.json.id}/placement`, { planes: ['console'] })).status, 200);
  httpsPort = t.gw.doors.find((d) => d.plane === 'control' && d.protocol === 'https')!.port;
  httpsSession = await signInHttps(`https://localhost:${httpsPort}`, 'root', ROOT_PASSWORD);
});
after(async () => { await t?.close(); });

/** About 1.5 KB of attributes a line, as an error with its stack makes. */
const STACK = 'at frame (src/somewhere/file.ts:1:1)\n'.repeat(40);
const pour = (lines: number, tag: string) => {
  for (let i = 0; i < lines; i++) t.gw.ctx.log.warn(`upstream failed ${tag} ${i}`, { stack: STACK });
};

interface Reader {
  readonly types: string[];
  /** The message of each `line` sent, in order. */
  readonly messages: string[];
  readonly closed: Promise<{ code: number; reason: string }>;
  resume(): void;
}

/** A feed whose reader does not read until `resume`: its socket is paused as the upgrade completes. */
function pausedReader(door: 'plain' | 'https'): Promise<Reader> {
  const url = door === 'plain'
    ? `${t.url('control').replace(/^http/, 'ws')}/api/logs/live`
    : `wss://localhost:${httpsPort}/api/logs/live`;
  const ws = new WebSocket(url, { headers: door === 'plain' ? root.headers : httpsSession, rejectUnauthorized: false });
  const types: string[] = [];
  const messages: string[] = [];
  let socket: { resume(): void } | undefined;
  ws.on('upgrade', (res) => { res.socket.pause(); socket = res.socket; });
  ws.on('message', (data) => {
    const m = JSON.parse(String(data)) as { type: string; line?: { message: string } };
    types.push(m.type);
    if (m.line) messages.push(m.line.message);
  });
  ws.on('error', () => undefined);
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })));
  return new Promise((resolve) => ws.once('open', () => {
    resolve({ types, messages, closed, resume: () => socket?.resume() });
    closed.then(() => undefined, () => undefined);
  }));
}

/** Lets the gateway's turn that sends `hello` (and what was poured) run before the test goes on. */
const settle = () => new Promise((r) => setTimeout(r, 150));

for (const door of ['plain', 'https'] as const) {
  test(`${door} door: a reader that stops reading while lines pour in is closed with 1013 and a reason`, async () => {
    const reader = await pausedReader(door);
    await settle();
    pour(4_000, door);
    await settle();
    reader.resume();
    const closed = await reader.closed;
    assert.equal(closed.code, 1013, JSON.stringify(closed));
    assert.match(closed.reason, /too slow: more than 1048576 bytes waited/);
    assert.equal(reader.types[0], 'hello');
    assert.ok(reader.types.length < 4_001, `the feed stopped before every line (${reader.types.length - 1} lines)`);
  });
}

test('a hello of several megabytes is sent on both doors, and a reader a moment behind gets the line after it', async () => {
  pour(5_000, 'buffer');
  for (const door of ['plain', 'https'] as const) {
    const reader = await pausedReader(door);
    await settle();
    t.gw.ctx.log.warn('one more line');
    await settle();
    reader.resume();
    // The gateway's own lines may come too (a loaded machine logs what it sees): the one told is among them.
    await until(() => (reader.messages.includes('one more line') ? true : undefined), `${door}: hello and the line after it (got ${reader.types.join(', ')})`);
    assert.equal(reader.types[0], 'hello', door);
    assert.ok(reader.types.slice(1).every((type) => type === 'line'), `${door}: ${reader.types.join(', ')}`);
    const open = await Promise.race([reader.closed.then((c) => `closed ${c.code} ${c.reason}`), settle().then(() => 'open')]);
    assert.equal(open, 'open', door);
  }
  const hello = (await root.get('/api/logs')).text.length;
  assert.ok(hello > 5 * 1024 * 1024, `the buffer is ${hello} bytes`);
});

test('one session or token holds at most 20 feeds open on a node, all feeds together', async () => {
  const token = (await root.post('/api/tokens', { name: 'feeds-script', kind: 'admin' })).json.token as string;
  const headers = { authorization: `Bearer ${token}` };
  const ws = (path: string) => `${t.url('control').replace(/^http/, 'ws')}${path}`;
  const opened = (path: string) => new Promise<WebSocket>((resolve, reject) => {
    const s = new WebSocket(ws(path), { headers });
    s.once('open', () => resolve(s));
    s.once('unexpected-response', (_req, res) => reject(Object.assign(new Error(`upgrade answered ${res.statusCode}`), { status: res.statusCode })));
    s.on('error', () => undefined);
  });
  const feeds: WebSocket[] = [];
  for (let i = 0; i < 20; i++) feeds.push(await opened(i % 2 === 0 ? '/api/logs/live' : '/api/metrics/live'));
  await assert.rejects(opened('/api/logs/live'), (err: { status?: number }) => err.status === 429);
  await assert.rejects(opened('/api/schedules/live'), (err: { status?: number }) => err.status === 429, 'all feeds together');
  // Another credential is not held back by this one's feeds.
  const other = new WebSocket(ws('/api/logs/live'), { headers: root.headers });
  await new Promise((resolve) => other.once('open', resolve));
  other.close();
  const one = feeds.pop()!;
  const gone = new Promise((resolve) => one.once('close', resolve));
  one.close();
  await gone;
  await until(async () => {
    try {
      feeds.push(await opened('/api/logs/live'));
      return true;
    } catch {
      return undefined;
    }
  }, 'a feed once one closed');
  for (const f of feeds) f.terminate();
});
