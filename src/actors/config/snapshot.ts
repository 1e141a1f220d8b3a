import type { EntityManager } from '@mikro-orm/core';
import { Account, Organisation, Role, Route, Session, SettingRow, SigningKeyRow, Token, TrustedAuthority } from '../../store/entities.ts';
import { readLogSettings } from '../../core/logs/log-settings.ts';
import { LOGS_KEY } from './handlers/logs.ts';
import type { IdentityMode } from '../../core/model.ts';
import { declaredEndpoints } from '../../core/routes/endpoints.ts';
import { unseal } from '../../core/vault/seal.ts';
import type { SigningKey } from '../../pipeline/identity.ts';
import type { Snapshot } from './messages.ts';
import { routeAuditView } from './handlers/route-audit.ts';

export interface SnapshotOptions {
  readonly now: number;
  readonly masterKey: Buffer;
  /** Told about signing keys this node cannot open (another master key sealed them). */
  readonly onUnsealable: (kid: string, reason: string) => void;
}

/** Reads the configuration tables into the plain snapshot the main thread serves from. */
export async function loadSnapshot(em: EntityManager, opts: SnapshotOptions): Promise<Snapshot> {
  // Read before the tables: a change that commits while they are read then shows up as a new
  // mark at the next poll, which loads again, instead of being taken as already folded in.
  const mark = await changeMark(em);
  const [accounts, sessions, tokens, routes, roles, organisations, keys, authorities, logs] = await Promise.all([
    em.find(Account, {}),
    em.find(Session, { expiresAt: { $gt: opts.now } }),
    em.find(Token, { revokedAt: null }),
    em.find(Route, {}, { orderBy: { id: 'asc' } }),
    em.find(Role, {}, { orderBy: { name: 'asc' } }),
    em.find(Organisation, {}, { orderBy: { id: 'asc' } }),
    em.find(SigningKeyRow, {}, { orderBy: { createdAt: 'asc', kid: 'asc' } }),
    em.find(TrustedAuthority, {}, { orderBy: { createdAt: 'asc', id: 'asc' } }),
    em.findOne(SettingRow, { key: LOGS_KEY }),
  ]);
  const signingKeys: SigningKey[] = [];
  for (const k of keys) {
    try {
      signingKeys.push({ kid: k.kid, privateKeyPem: unseal(opts.masterKey, `signing-key/${k.kid}`, k.sealed) });
    } catch (err) {
      opts.onUnsealable(k.kid, (err as Error).message);
    }
  }
  return {
    mark,
    accounts: accounts.map((a) => ({
      id: a.id, name: a.name, passwordHash: a.passwordHash, capabilities: a.capabilities,
      roles: a.roles, organisation: a.organisation ?? null, disabled: a.disabled,
    })),
    sessions: sessions.map((s) => ({ id: s.id, account: s.account, scope: s.scope === 'app' ? 'app' as const : 'console' as const, expiresAt: s.expiresAt })),
    tokens: tokens.map((t) => ({
      id: t.id, name: t.name, kind: t.kind, hash: t.hash, account: t.account ?? null,
      routes: t.routes ?? null, roles: t.roles ?? null, organisations: t.organisations ?? null,
    })),
    routes: routes.map((r) => ({
      id: r.id, upstream: r.upstream, paths: r.paths, hosts: r.hosts, stripPrefix: r.stripPrefix,
      rule: r.rule ?? null, endpointRules: r.endpointRules, identity: r.identity as IdentityMode,
      timeoutMs: r.timeoutMs, organisation: r.organisation ?? null, audit: routeAuditView(r.openapi, r.audit),
      endpoints: declaredEndpoints(r.openapi, r.endpointRules),
    })),
    roles: roles.map((r) => ({ name: r.name, implies: r.implies })),
    organisations: organisations.map((o) => ({ id: o.id, name: o.name, hours: o.hours ?? null })),
    signingKeys,
    trustedAuthorities: authorities.map((a) => a.pem),
    logs: readLogSettings(logs?.value),
  };
}

/** How many of the newest change rows make up a mark. */
const MARK_WINDOW = 64;

/**
 * What the change table holds, as far as a poll needs to know: the ids of its newest rows.
 * The highest id alone is not enough on PostgreSQL: ids are handed out when a transaction
 * inserts but become visible when it commits, so a slow writer's change can appear below an id
 * already seen. It then changes this list, though not the maximum. `kinds` narrows it to the
 * changes one actor folds in (the CertActor reads only `tls`).
 */
export async function changeMark(em: EntityManager, kinds?: readonly string[]): Promise<string> {
  // A plain statement: the ORM's find made 64 entities to read 64 ids (about 1-5 ms, at every poll
  // of both actors and at every write's publish).
  const where = kinds ? ` where kind in (${kinds.map(() => '?').join(', ')})` : '';
  const rows = (await em.getConnection().execute(
    `select id from changes${where} order by id desc limit ${MARK_WINDOW}`, kinds ? [...kinds] : [], 'all')) as Array<{ id: number | string }>;
  return rows.map((r) => String(r.id)).join(',');
}
