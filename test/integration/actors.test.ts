import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startTestGateway, ROOT_PASSWORD, type TestGateway } from '../helpers/gateway.ts';
import { call, signIn } from '../helpers/http.ts';

let t: TestGateway;
before(async () => { t = await startTestGateway(); });
after(async () => { await t?.close(); });

async function until(what: string, check: () => Promise<boolean> | boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.fail(`timed out waiting for: ${what}`);
}

// That calls held by a dying worker are rejected is shown deterministically in supervisor.test.ts.
test('a killed actor is restarted and the gateway serves throughout', async () => {
  const control = t.url('control');
  const cookie = await signIn(control, 'root', ROOT_PASSWORD);
  const host = t.gw.config.host;
  const before = host.threadId;
  assert.equal(host.state, 'ready');

  await host.kill();

  // While the actor restarts, requests answered from the snapshot keep working.
  const me = await call(`${control}/api/session`, { headers: { cookie } });
  assert.equal(me.status, 200);
  assert.equal((await call(`${t.url('data')}/healthz`)).status, 200);

  await until('the config actor is ready again', () => host.state === 'ready');
  assert.notEqual(host.threadId, before, 'a new worker thread');
  assert.equal(host.restarts, 1);
  const crash = t.logs.find((r) => r.msg === 'actor stopped unexpectedly; restarting');
  assert.ok(crash, 'the supervisor logs why');
  assert.equal(crash.attrs.actor, 'config');
  assert.match(String(crash.attrs.reason), /exited with code/);
  assert.equal(crash.level, 'error');
  assert.ok(t.logs.some((r) => r.msg === 'actor restarted'));

  const ready = await call(`${control}/readyz`);
  assert.equal(ready.status, 200, ready.text);
  // Writes go through the restarted actor.
  const again = await signIn(control, 'root', ROOT_PASSWORD);
  assert.equal((await call(`${control}/api/session`, { headers: { cookie: again } })).status, 200);
});

test('readyz says not ready, with the reason, while an actor restarts', async () => {
  const host = t.gw.config.host;
  await host.kill();
  const during = await call(`${t.url('internal')}/readyz`);
  if (during.status === 503) {
    assert.equal(during.json.code, 'not-ready');
    assert.match(during.json.detail, /config actor/);
  } else {
    // The restart can beat the probe on a fast machine; then it must say ready.
    assert.equal(during.status, 200);
  }
  await until('ready again', async () => (await call(`${t.url('internal')}/readyz`)).status === 200);
  assert.equal(host.restarts, 2);
});

/** A thread's niceness as the kernel holds it (/proc/<pid>/task/<tid>/stat, field 19). */
function niceOf(thread: number): number {
  const stat = readFileSync(`/proc/${process.pid}/task/${thread}/stat`, 'latin1');
  // The name in parentheses may hold spaces: the fields are counted after its closing one.
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

test('the background actors\' threads yield the core to the data plane (nice 10), after a restart too; the others run as the process does', { skip: process.platform !== 'linux' }, async () => {
  const ready = new Map<string, number>();
  // Each actor's current thread: the last it was ready on (earlier tests restart some).
  for (const r of t.logs) if ((r.msg === 'actor ready' || r.msg === 'actor restarted') && typeof r.attrs.thread === 'number') ready.set(String(r.attrs.actor), r.attrs.thread);
  for (const name of ['logs', 'metrics', 'audit', 'certs']) assert.equal(niceOf(ready.get(name)!), 10, name);
  for (const name of ['config', 'schedules-0']) assert.equal(niceOf(ready.get(name)!), 0, name);
  assert.equal(niceOf(process.pid), 0, 'the main thread');
  const host = t.gw.ctx.metrics.host;
  const restartsBefore = host.restarts;
  await host.kill();
  await until('the metrics actor is ready again', () => host.state === 'ready' && host.restarts > restartsBefore);
  const again = t.logs.filter((r) => r.msg === 'actor restarted' && r.attrs.actor === 'metrics').at(-1);
  assert.equal(typeof again?.attrs.thread, 'number');
  assert.equal(niceOf(again!.attrs.thread as number), 10);
});
