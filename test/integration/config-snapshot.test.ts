/**
 * The configuration snapshot is read by plain statements (src/actors/config/snapshot.ts). Checked
 * against the same tables read through the ORM's entities, on the test's database: every column's
 * conversion (JSON as text or parsed, booleans as 0/1 or true/false, bigints as strings), the
 * filters (expired sessions, revoked tokens), the orders and the signing keys that do not unseal.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EntityManager } from '@mikro-orm/core';
import { migratedStore } from '../helpers/db.ts';
import { loadSnapshot } from '../../src/actors/config/snapshot.ts';
import { Account, Organisation, Role, Route, Session, SettingRow, SigningKeyRow, Token, TrustedAuthority } from '../../src/store/entities.ts';
import { seal } from '../../src/core/vault/seal.ts';
import { readLogSettings } from '../../src/core/logs/log-settings.ts';
import { declaredEndpoints } from '../../src/core/routes/endpoints.ts';
import { routeAuditView } from '../../src/actors/config/handlers/route-audit.ts';

const NOW = 1_800_000_000_000;
const KEY = Buffer.alloc(32, 7);
const OTHER_KEY = Buffer.alloc(32, 9);

const CONTRACT = {
  openapi: '3.0.3',
  info: { title: 'orders', version: '1' },
  paths: { '/orders/{id}': { get: { operationId: 'getOrder' }, put: { operationId: 'putOrder' } }, '/health': { get: {} } },
};

function fill(em: EntityManager): void {
  const at = { createdAt: NOW - 5_000, updatedAt: NOW - 1_000 };
  em.create(Account, { id: 'a1', name: 'ada', passwordHash: 'h1', capabilities: ['gateway-admin'], roles: [], organisation: null, disabled: false, ...at });
  em.create(Account, { id: 'a2', name: 'bob é', passwordHash: 'h2', capabilities: [], roles: ['staff', 'ops'], organisation: 'o2', disabled: true, ...at });
  em.create(Session, { id: 's-live', account: 'a1', scope: 'console', createdAt: NOW - 10, expiresAt: NOW + 3_600_000 });
  em.create(Session, { id: 's-app', account: 'a2', scope: 'app', createdAt: NOW - 10, expiresAt: NOW + 1 });
  em.create(Session, { id: 's-gone', account: 'a1', scope: 'console', createdAt: NOW - 10, expiresAt: NOW });
  em.create(Token, { id: 't1', name: 'ci', kind: 'personal', hash: 'x1', account: 'a1', routes: null, roles: null, organisations: null, createdAt: NOW, revokedAt: null });
  em.create(Token, { id: 't2', name: 'jobs', kind: 'schedules', hash: 'x2', account: null, routes: ['shop'], roles: ['staff'], organisations: ['*'], createdAt: NOW, revokedAt: null });
  em.create(Token, { id: 't3', name: 'old', kind: 'personal', hash: 'x3', account: 'a2', routes: [], roles: [], organisations: [], createdAt: NOW, revokedAt: NOW - 1 });
  em.create(Route, {
    id: 'shop', upstream: 'http://127.0.0.1:9/', paths: ['/shop'], hosts: ['shop.example', 'b.example'], stripPrefix: true,
    rule: { roles: ['staff'] }, endpointRules: [{ method: 'PUT', path: '/orders/{id}', roles: ['ops'] }], identity: 'headers', timeoutMs: 2_500,
    openapi: CONTRACT, organisation: 'o2', audit: { operations: { putOrder: { on: true, description: 'an order changed', fields: { id: 'path.id' } } } }, ...at,
  });
  em.create(Route, {
    id: 'plain', upstream: 'https://up.example/base', paths: ['/p', '/q'], hosts: [], stripPrefix: false, rule: null, endpointRules: [],
    identity: 'none', timeoutMs: 30_000, openapi: null, organisation: null, audit: null, ...at,
  });
  for (const [name, implies] of [['staff', []], ['ops', ['staff']], ['admin', ['ops', 'staff']]] as const) em.create(Role, { name, implies: [...implies], ...at });
  em.create(Organisation, { id: 'o1', name: 'One', hours: null, ...at });
  em.create(Organisation, { id: 'o2', name: 'Two', hours: { timezone: 'Europe/Paris', windows: [{ days: ['mon', 'tue'], from: '08:00', to: '18:30' }] }, ...at });
  em.create(SigningKeyRow, { kid: 'k2', sealed: seal(KEY, 'signing-key/k2', 'pem-two'), createdAt: NOW - 2 });
  em.create(SigningKeyRow, { kid: 'k1', sealed: seal(KEY, 'signing-key/k1', 'pem-one'), createdAt: NOW - 2 });
  em.create(SigningKeyRow, { kid: 'k0', sealed: seal(OTHER_KEY, 'signing-key/k0', 'pem-zero'), createdAt: NOW - 3 });
  em.create(TrustedAuthority, { id: 'ta2', name: 'second', pem: 'PEM-2', subjects: ['CN=b'], notAfter: NOW + 9, fingerprint: 'f2', count: 1, createdAt: NOW - 1 });
  em.create(TrustedAuthority, { id: 'ta1', name: 'first', pem: 'PEM-1', subjects: ['CN=a'], notAfter: NOW + 9, fingerprint: 'f1', count: 2, createdAt: NOW - 1 });
  em.create(SettingRow, { key: 'logs', value: { accessLog: true, mode: 'agent', level: { level: 'debug', at: NOW, by: 'root' } }, updatedAt: NOW, updatedBy: 'root' });
}

/** The same tables through the ORM's entities, mapped as the snapshot maps them. */
async function throughEntities(em: EntityManager, unsealable: string[]) {
  const byId = <T extends { id: string }>(rows: T[]) => rows.sort((a, b) => a.id.localeCompare(b.id));
  const [accounts, sessions, tokens, routes, roles, organisations, keys, authorities, logs] = await Promise.all([
    em.find(Account, {}), em.find(Session, { expiresAt: { $gt: NOW } }), em.find(Token, { revokedAt: null }),
    em.find(Route, {}, { orderBy: { id: 'asc' } }), em.find(Role, {}, { orderBy: { name: 'asc' } }), em.find(Organisation, {}, { orderBy: { id: 'asc' } }),
    em.find(SigningKeyRow, {}, { orderBy: { createdAt: 'asc', kid: 'asc' } }), em.find(TrustedAuthority, {}, { orderBy: { createdAt: 'asc', id: 'asc' } }),
    em.findOne(SettingRow, { key: 'logs' }),
  ]);
  const signingKeys = [];
  for (const k of keys) {
    if (k.kid === 'k0') unsealable.push(k.kid);
    else signingKeys.push({ kid: k.kid, privateKeyPem: k.kid === 'k1' ? 'pem-one' : 'pem-two' });
  }
  return {
    accounts: byId(accounts.map((a) => ({ id: a.id, name: a.name, passwordHash: a.passwordHash, capabilities: a.capabilities, roles: a.roles, organisation: a.organisation ?? null, disabled: a.disabled }))),
    sessions: byId(sessions.map((s) => ({ id: s.id, account: s.account, scope: s.scope, expiresAt: s.expiresAt }))),
    tokens: byId(tokens.map((t) => ({ id: t.id, name: t.name, kind: t.kind, hash: t.hash, account: t.account ?? null, routes: t.routes ?? null, roles: t.roles ?? null, organisations: t.organisations ?? null }))),
    routes: routes.map((r) => ({
      id: r.id, upstream: r.upstream, paths: r.paths, hosts: r.hosts, stripPrefix: r.stripPrefix, rule: r.rule ?? null, endpointRules: r.endpointRules,
      identity: r.identity, timeoutMs: r.timeoutMs, organisation: r.organisation ?? null, audit: routeAuditView(r.openapi, r.audit), endpoints: declaredEndpoints(r.openapi, r.endpointRules),
    })),
    roles: roles.map((r) => ({ name: r.name, implies: r.implies })),
    organisations: organisations.map((o) => ({ id: o.id, name: o.name, hours: o.hours ?? null })),
    signingKeys,
    trustedAuthorities: authorities.map((a) => a.pem),
    logs: readLogSettings(logs?.value),
  };
}

test('the snapshot read by plain statements holds what the entities hold, column by column', async () => {
  const { db, store } = await migratedStore();
  try {
    const em = store.em();
    fill(em);
    await em.flush();
    const unsealable: string[] = [];
    const snapshot = await loadSnapshot(store.em(), { now: NOW, masterKey: KEY, onUnsealable: (kid) => unsealable.push(kid) });
    const expected = await throughEntities(store.em(), []);
    const { mark, ...read } = snapshot;
    const sorted = { ...read, accounts: [...read.accounts].sort((a, b) => a.id.localeCompare(b.id)), sessions: [...read.sessions].sort((a, b) => a.id.localeCompare(b.id)), tokens: [...read.tokens].sort((a, b) => a.id.localeCompare(b.id)) };
    assert.deepEqual(sorted, expected);
    // What the comparison rests on: the rows the filters keep and drop, and the values the drivers differ on.
    assert.deepEqual(sorted.sessions.map((s) => s.id), ['s-app', 's-live']);
    assert.deepEqual(sorted.tokens.map((t) => t.id), ['t1', 't2']);
    assert.deepEqual(sorted.accounts.map((a) => a.disabled), [false, true]);
    assert.equal(sorted.sessions[0]!.expiresAt, NOW + 1);
    assert.deepEqual(read.routes.map((r) => [r.id, r.stripPrefix, r.rule]), [['plain', false, null], ['shop', true, { roles: ['staff'] }]]);
    assert.ok(read.routes[1]!.audit !== null && (read.routes[1]!.endpoints?.length ?? 0) > 0, 'the contract is read as a document');
    assert.deepEqual(read.organisations[1]!.hours?.windows[0]?.days, ['mon', 'tue']);
    assert.deepEqual(read.signingKeys.map((k) => k.kid), ['k1', 'k2']);
    assert.deepEqual(unsealable, ['k0']);
    assert.deepEqual(read.trustedAuthorities, ['PEM-1', 'PEM-2']);
    assert.equal(read.logs.mode, 'agent');
    assert.equal(mark, '', 'no change row written');
  } finally {
    await store.close();
    await db.drop();
  }
});
