import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { signInAdmin, type Admin } from '../helpers/admin.ts';
import { call } from '../helpers/http.ts';
import { TEST_DATABASE } from '../helpers/db.ts';
import { openStore } from '../../src/store/orm.ts';
import { VaultEntry } from '../../src/store/entities.ts';

const KEY_A = randomBytes(32).toString('base64');
const KEY_B = randomBytes(32).toString('base64');
const SECRET = 'sk_live_very-secret-value-123';

let t: TestGateway;
let root: Admin;
before(async () => {
  t = await startTestGateway({ GATEWAY_VAULT_KEY: KEY_A });
  root = await signInAdmin(t.url('control'));
  await root.put('/api/organisations/acme', { name: 'Acme' });
});
after(async () => {
  await t?.close();
  // A node restarted on the same database (SQLite) does not own it: dropped here either way.
  await t?.db.drop();
});

test('vault values are sealed, never answered, and scoped to the application or an organisation', async () => {
  const put = await root.put('/api/vault/stripe_key', { value: SECRET });
  assert.equal(put.status, 201, put.text);
  assert.equal((await root.put('/api/vault/stripe_key', { value: `${SECRET}-2` })).status, 204);
  assert.equal((await root.put('/api/organisations/acme/vault/stripe_key', { value: 'acme-own' })).status, 201);

  const app = await root.get('/api/vault');
  assert.deepEqual(app.json.entries.map((e: { name: string; scope: string; readable: boolean }) => [e.name, e.scope, e.readable]), [['stripe_key', 'app', true]]);
  const org = await root.get('/api/organisations/acme/vault');
  assert.deepEqual(org.json.entries.map((e: { name: string; scope: string }) => [e.name, e.scope]), [['stripe_key', 'acme']]);
  for (const a of [put, app, org]) assert.doesNotMatch(a.text, /very-secret|acme-own/);

  const store = await openStore({ dataDir: t.db.dataDir, databaseUrl: t.db.databaseUrl });
  try {
    const rows = await store.em().find(VaultEntry, {});
    assert.equal(rows.length, 2);
    for (const r of rows) {
      assert.match(r.sealed, /^v1\./);
      assert.doesNotMatch(r.sealed, /secret|acme-own/);
    }
  } finally {
    await store.close();
  }
  assert.ok(!t.logs.some((l) => JSON.stringify(l).includes('very-secret')), 'no log line holds the value');

  const bad = await root.put('/api/vault/9lives', { value: 'x' });
  assert.equal(bad.status, 400);
  assert.equal(bad.json.field, 'name');
  assert.equal((await root.put('/api/vault/empty', { value: '' })).json.field, 'value');
  assert.equal((await root.put('/api/organisations/nowhere/vault/x', { value: 'v' })).status, 404);
  // A value goes out in a header: one a header cannot carry is refused where it is written.
  for (const value of ['two\r\nlines', 'nul\u0000byte', 'del\u007f', 'emoji \u{1F600}']) {
    const refused = await root.put('/api/vault/broken', { value });
    assert.equal(refused.status, 400, JSON.stringify(value));
    assert.equal(refused.json.field, 'value');
    assert.match(refused.json.detail, /header|NUL/);
  }
  assert.equal((await root.put('/api/vault/tabbed', { value: 'a\tb caf\u00e9' })).status, 201, 'a tab and Latin-1 go');
  assert.equal((await root.del('/api/vault/tabbed')).status, 204);
  assert.equal((await root.del('/api/vault/stripe_key')).status, 204);
  assert.equal((await root.del('/api/vault/stripe_key')).status, 404);
});

test('a node with another master key says it cannot unseal, and publishes no signing key', async () => {
  await root.put('/api/vault/webhook_secret', { value: SECRET });
  assert.equal((await call(`${t.url('data')}/.well-known/jwks.json`)).status, 200);
  // A second node of the cluster on PostgreSQL; on SQLite (one gateway per data directory) the
  // node itself, restarted with the other key, then with its own again.
  const sqlite = TEST_DATABASE === 'sqlite';
  if (sqlite) await t.gw.stop();
  const other = await startTestGateway({ GATEWAY_VAULT_KEY: KEY_B, GATEWAY_NODE_NAME: 'node-other-key' }, t.db);
  try {
    const admin = await signInAdmin(other.url('control'));
    const listed = await admin.get('/api/vault');
    const entry = listed.json.entries.find((e: { name: string }) => e.name === 'webhook_secret');
    assert.equal(entry.readable, false);
    const jwks = await call(`${other.url('data')}/.well-known/jwks.json`);
    assert.equal(jwks.status, 503);
    assert.equal(jwks.json.code, 'identity.unavailable');
    assert.match(jwks.json.detail, /cannot unseal/);
    const logged = other.logs.find((l) => l.msg === 'identity signing key cannot be unsealed on this node');
    assert.ok(logged, 'the node says so in its log');
    assert.match(String(logged.attrs.reason), /vault master key/);
  } finally {
    await other.gw.stop();
    if (sqlite) {
      t = await startTestGateway({ GATEWAY_VAULT_KEY: KEY_A }, t.db);
      root = await signInAdmin(t.url('control'));
    }
  }
});

test('whether an organisation exists is told only to those who may open its vault', async () => {
  assert.equal((await root.post('/api/accounts', { name: 'vault-plain', password: 'plain-password-1' })).status, 201);
  const plain = await signInAdmin(t.url('control'), 'vault-plain', 'plain-password-1');
  for (const [method, path] of [['get', ''], ['put', '/x'], ['del', '/x']] as const) {
    const known = await plain[method](`/api/organisations/acme/vault${path}`, method === 'put' ? { value: 'v' } : undefined);
    const unknown = await plain[method](`/api/organisations/no-such-org/vault${path}`, method === 'put' ? { value: 'v' } : undefined);
    assert.equal(known.status, 403, known.text);
    assert.equal(unknown.status, 403, `${method} on an unknown organisation: ${unknown.text}`);
    assert.equal(unknown.json.code, 'capability');
  }
  assert.equal((await root.get('/api/organisations/no-such-org/vault')).status, 404, 'an app-admin is told');
});
