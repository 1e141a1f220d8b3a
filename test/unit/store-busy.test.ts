import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isBusy, retryBusy } from '../../src/store/busy.ts';
import { GatewayError } from '../../src/http/errors.ts';

test('a stale SQLite snapshot is run again; anything else is thrown at once', async () => {
  assert.equal(isBusy(new Error('insert into `roles` … - database is locked')), true);
  assert.equal(isBusy(Object.assign(new Error('x'), { code: 'SQLITE_BUSY' })), true);
  assert.equal(isBusy(new GatewayError('role.cycle', 'a cycle')), false);

  let calls = 0;
  assert.equal(await retryBusy(async () => {
    calls++;
    if (calls < 3) throw new Error('database is locked');
    return 'written';
  }), 'written');
  assert.equal(calls, 3);

  calls = 0;
  await assert.rejects(retryBusy(async () => { calls++; throw new GatewayError('role.cycle', 'a cycle'); }), /a cycle/);
  assert.equal(calls, 1, 'a refusal is not tried again');

  calls = 0;
  await assert.rejects(retryBusy(async () => { calls++; throw new Error('database is locked'); }, 4), /locked/);
  assert.equal(calls, 4, 'it gives up after its attempts');
});
