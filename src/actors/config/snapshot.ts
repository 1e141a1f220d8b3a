import type { EntityManager } from '@mikro-orm/core';
import type { Organisation, Route } from '../../store/entities.ts';
import { flag, json, selectRows, str } from '../../store/rows.ts';
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

/**
 * Reads the configuration tables into the plain snapshot the main thread serves from, by plain
 * statements: a snapshot is read at every write and every change another process made, and the
 * ORM made an entity of each row only for its fields to be copied out (about five times the time).
 * The columns are the entities' (store/entities.ts), named as the migrations name them.
 */
export async function loadSnapshot(em: EntityManager, opts: SnapshotOptions): Promise<Snapshot> {
  // Read before the tables: a change that commits while they are read then shows up as a new
  // mark at the next poll, which loads again, instead of being taken as already folded in.
  const mark = await changeMark(em);
  const [accounts, sessions, tokens, routes, roles, organisations, keys, authorities, logs] = await Promise.all([
    selectRows(em, 'select id, name, password_hash, capabilities, roles, organisation, disabled from accounts'),
    selectRows(em, 'select id, account, scope, expires_at from sessions where expires_at > ?', [opts.now]),
    selectRows(em, 'select id, name, kind, hash, account, routes, roles, organisations from tokens where revoked_at is null'),
    selectRows(em, `select id, upstream, paths, hosts, strip_prefix, rule, endpoint_rules, identity, timeout_ms, organisation, openapi, audit
      from routes order by id asc`),
    selectRows(em, 'select name, implies from roles order by name asc'),
    selectRows(em, 'select id, name, hours from organisations order by id asc'),
    selectRows(em, 'select kid, sealed from signing_keys order by created_at asc, kid asc'),
    selectRows(em, 'select pem from trusted_authorities order by created_at asc, id asc'),
    selectRows(em, 'select value from settings where key = ?', [LOGS_KEY]),
  ]);
  const signingKeys: SigningKey[] = [];
  for (const k of keys) {
    const kid = String(k.kid);
    try {
      signingKeys.push({ kid, privateKeyPem: unseal(opts.masterKey, `signing-key/${kid}`, String(k.sealed)) });
    } catch (err) {
      opts.onUnsealable(kid, (err as Error).message);
    }
  }
  return {
    mark,
    accounts: accounts.map((a) => ({
      id: String(a.id), name: String(a.name), passwordHash: String(a.password_hash), capabilities: json(a.capabilities) as string[],
      roles: json(a.roles) as string[], organisation: str(a.organisation), disabled: flag(a.disabled),
    })),
    sessions: sessions.map((s) => ({
      id: String(s.id), account: String(s.account), scope: s.scope === 'app' ? 'app' as const : 'console' as const, expiresAt: Number(s.expires_at),
    })),
    tokens: tokens.map((t) => ({
      id: String(t.id), name: String(t.name), kind: String(t.kind), hash: String(t.hash), account: str(t.account),
      routes: json(t.routes) as string[] | null, roles: json(t.roles) as string[] | null, organisations: json(t.organisations) as string[] | null,
    })),
    routes: routes.map((r) => {
      const openapi = json(r.openapi);
      const endpointRules = json(r.endpoint_rules) as Route['endpointRules'];
      return {
        id: String(r.id), upstream: String(r.upstream), paths: json(r.paths) as string[], hosts: json(r.hosts) as string[],
        stripPrefix: flag(r.strip_prefix), rule: json(r.rule) as NonNullable<Route['rule']> | null, endpointRules, identity: String(r.identity) as IdentityMode,
        timeoutMs: Number(r.timeout_ms), organisation: str(r.organisation), audit: routeAuditView(openapi, json(r.audit) as Route['audit']),
        endpoints: declaredEndpoints(openapi, endpointRules),
      };
    }),
    roles: roles.map((r) => ({ name: String(r.name), implies: json(r.implies) as string[] })),
    organisations: organisations.map((o) => ({ id: String(o.id), name: String(o.name), hours: json(o.hours) as NonNullable<Organisation['hours']> | null })),
    signingKeys,
    trustedAuthorities: authorities.map((a) => String(a.pem)),
    logs: readLogSettings(logs[0] === undefined ? undefined : json(logs[0].value)),
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
  const rows = await selectRows(em, `select id from changes${where} order by id desc limit ${MARK_WINDOW}`, kinds ?? []);
  return rows.map((r) => String(r.id)).join(',');
}
