import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestGateway } from '../helpers/gateway.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { signInAdmin } from '../helpers/admin.ts';

const YAML = `
roles:
  admin: { implies: [staff] }   # defined before what it implies: the file's order does not matter
  staff: {}
organisations:
  acme: { name: Acme }
routes:
  orders:
    upstream: http://orders.internal:8080
    paths: [/orders, /carts]
    rule: { roles: [staff] }
    identity: jwt
    organisation: acme
`;

test('GATEWAY_CONFIG (YAML) applies roles, organisations and routes at start', async () => {
  const db = await createTestDatabase();
  const file = join(db.dataDir, 'gateway.yaml');
  writeFileSync(file, YAML);
  const t = await startTestGateway({ GATEWAY_CONFIG: file }, db);
  try {
    const root = await signInAdmin(t.url('control'));
    const route = (await root.get('/api/routes/orders')).json;
    assert.deepEqual(route.paths, ['/orders', '/carts']);
    assert.equal(route.identity, 'jwt');
    assert.deepEqual((await root.get('/api/roles/admin')).json.grants, ['admin', 'staff']);
    const line = t.logs.find((l) => l.msg === 'declarative configuration applied');
    assert.equal(line?.attrs.created, 4);
  } finally {
    await t.gw.stop();
  }
  // Applied again at the next start: an update, not a duplicate.
  const again = await startTestGateway({ GATEWAY_CONFIG: file }, db);
  try {
    assert.equal(again.logs.find((l) => l.msg === 'declarative configuration applied')?.attrs.updated, 4);
  } finally {
    await again.close();
  }
});

test('a bad declarative file stops the start with the place at fault, and writes nothing', async () => {
  const db = await createTestDatabase();
  try {
    const cases: Array<[string, string, RegExp]> = [
      ['bad-upstream.json', JSON.stringify({ roles: { staff: {} }, routes: { a: { upstream: 'ftp://x', paths: ['/a'] } } }), /routes\.a\.upstream: upstream must use http:\/\/ or https:\/\//],
      ['bad-role.yaml', 'routes:\n  a: { upstream: "http://a", paths: [/a], rule: { roles: [ghost] } }\n', /routes\.a\.rule\.roles: The role "ghost"/],
      ['cycle.yaml', 'roles:\n  a: { implies: [b] }\n  b: { implies: [a] }\n', /roles\.\w\.implies: These implies would make a role imply itself/],
      ['typo.yaml', 'rutes: {}\n', /"rutes" is not a field/],
      ['broken.yaml', 'routes: [\n', /cannot be read/],
      // A member written twice: JSON.parse would keep the second silently, YAML refuses; both refuse.
      ['twice.json', '{"routes": {"a": {"upstream": "http://a",\n "paths": ["/a"], "upstream": "http://b"}}}', /routes\.a: "upstream" is written twice \(again on line 2\)/],
      ['twice-top.json', '{"routes": {}, "routes": {"a": {"upstream": "http://a", "paths": ["/a"]}}}', /the top level: "routes" is written twice/],
      ['surrogate.yaml', 'organisations:\n  acme: { name: "Acme \\ud800" }\n', /organisations\.acme\.name: organisations\.acme\.name holds half of a UTF-16 surrogate pair/],
      ['twice.yaml', 'routes:\n  a: { upstream: "http://a", paths: [/a] }\n  a: { upstream: "http://b", paths: [/b] }\n', /Map keys must be unique/],
    ];
    for (const [name, text, expected] of cases) {
      const file = join(db.dataDir, name);
      writeFileSync(file, text);
      await assert.rejects(startTestGateway({ GATEWAY_CONFIG: file }, db), (err: Error) => {
        assert.match(err.message, new RegExp(`^GATEWAY_CONFIG .*${name}: `));
        assert.match(err.message, expected);
        return true;
      });
    }
    const t = await startTestGateway({}, db);
    try {
      const root = await signInAdmin(t.url('control'));
      assert.deepEqual((await root.get('/api/routes')).json.routes, []);
      assert.deepEqual((await root.get('/api/roles')).json.roles, [], 'the role of the refused file was not kept');
    } finally {
      await t.gw.stop();
    }
  } finally {
    await db.drop();
  }
});

test('a declarative file writes one line: counts, then the names added and updated; the same file again writes nothing', async () => {
  const db = await createTestDatabase();
  const file = join(db.dataDir, 'gateway.json');
  const routes = Object.fromEntries(Array.from({ length: 85 }, (_, i) => [`r${String(i).padStart(2, '0')}`, { upstream: 'http://127.0.0.1:9', paths: [`/r${i}`] }]));
  writeFileSync(file, JSON.stringify({ roles: { ops: {} }, routes }));
  let g = await startTestGateway({ GATEWAY_CONFIG: file }, db);
  try {
    const admin = await signInAdmin(g.url('control'));
    await g.gw.ctx.audit.call('audit.settle', null);
    const lines = (await admin.get('/api/audit?kind=config.apply')).json.events;
    assert.equal(lines.length, 1);
    assert.equal(lines[0].target.kind, 'gateway');
    assert.equal(lines[0].actor, null, 'the gateway\'s own act');
    assert.match(lines[0].detail, /^86 added, 0 updated, 0 removed\. Added: role ops, route r00, route r01, .* and 6 more\.$/);
    assert.equal((lines[0].detail.match(/route r\d\d/g) ?? []).length, 79, 'eighty names in all, the rest counted');
  } finally {
    await g.gw.stop();
  }
  writeFileSync(file, JSON.stringify({ roles: { ops: {} }, routes: { ...routes, r00: { upstream: 'http://127.0.0.1:10', paths: ['/r0'] } } }));
  g = await startTestGateway({ GATEWAY_CONFIG: file }, db);
  try {
    const admin = await signInAdmin(g.url('control'));
    await g.gw.ctx.audit.call('audit.settle', null);
    const lines = (await admin.get('/api/audit?kind=config.apply')).json.events;
    assert.equal(lines.length, 2);
    assert.equal(lines[0].detail, '0 added, 1 updated, 0 removed. Updated: route r00.');
  } finally {
    await g.gw.stop();
  }
  g = await startTestGateway({ GATEWAY_CONFIG: file }, db);
  try {
    const admin = await signInAdmin(g.url('control'));
    await g.gw.ctx.audit.call('audit.settle', null);
    assert.equal((await admin.get('/api/audit?kind=config.apply')).json.events.length, 2, 'a file that moved nothing writes no line');
  } finally {
    await g.close();
  }
});
