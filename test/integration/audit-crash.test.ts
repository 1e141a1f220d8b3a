/**
 * The AuditBatcher's thread crashes while lines wait in it (its 50 ms of gathering): the main
 * thread tells the restarted actor again what was not written, and each line is in the trail once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway } from '../helpers/gateway.ts';

test('lines held by an AuditBatcher that crashed reach the trail once, told again to the restarted actor', async () => {
  const t = await startTestGateway();
  try {
    const audit = t.gw.ctx.audit;
    const at = Date.now();
    const names = Array.from({ length: 400 }, (_, i) => `crash-${i}`);
    const record = (name: string) => audit.record({
      at, part: 'security', action: 'signin.refused', actorAccount: null, actorToken: null,
      targetKind: 'account', targetId: null, targetName: name, organisation: null, organisationFrom: null,
      changes: null, detail: 'bad-credentials', address: '127.0.0.1', traceId: null, attributes: null,
    });
    for (const name of names.slice(0, 200)) assert.ok(record(name));
    // The batch crosses on the next turn; the actor holds it for its 50 ms of gathering.
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setTimeout(r, 10));
    await audit.host.kill();
    // Lines recorded while the actor restarts wait in this thread's queue.
    for (const name of names.slice(200)) assert.ok(record(name));
    for (let i = 0; i < 200 && audit.host.state !== 'ready'; i++) await new Promise((r) => setTimeout(r, 25));
    assert.equal(audit.host.state, 'ready');
    await audit.call('audit.settle', null);
    const rows: Array<{ targetName: string | null }> = [];
    let cursor: string | undefined;
    do {
      const page = await audit.call('audit.query', { limit: 500, kind: 'signin.refused', ...(cursor ? { afterId: cursor } : {}) });
      rows.push(...page);
      cursor = page.length === 500 ? page.at(-1)!.id : undefined;
    } while (cursor);
    const seen = rows.map((r) => r.targetName ?? '').filter((n) => n.startsWith('crash-')).sort();
    assert.deepEqual(seen, [...names].sort(), `every line once (${seen.length} of ${names.length})`);
    const state = await audit.pushState();
    assert.deepEqual(state.dropped, { audit: 0, console: 0 });
  } finally {
    await t.close();
  }
});
