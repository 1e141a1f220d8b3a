/**
 * ACME issuance in the background of the certificate actor (spec 1.2 rules 19 and 24): an order
 * placed on the console or the application is asked of its authority at once, at start when it
 * still has no certificate, and again for renewal once less than a third of its lifetime
 * remains (looked at hourly, on the clock). Orders go one at a time.
 *
 * In a cluster an order is asked by one node at a time: on PostgreSQL the node holds a
 * transaction-scoped advisory lock on the order for the whole issuance, and a node that finds it
 * taken skips the order (the holder's certificate reaches it through the change bus). The holder
 * reads the row again under the lock, so an order another node has just issued is not asked
 * twice. SQLite is one process: the queue alone serialises, and the result is written in a
 * short transaction (holding SQLite's write lock through an issuance would stop every writer).
 *
 * The certificate and its sealed key land in the order's row, the cache every node reads; a
 * change row tells every node to reload its doors. A refusal is kept in the row as the
 * authority explained it. On the community edition nothing is asked and nothing renews.
 */
import type { EntityManager } from '@mikro-orm/core';
import { AcmeAuthorityRow, CertificateRow, Change, PlacementRow } from '../../store/entities.ts';
import type { Store } from '../../store/orm.ts';
import { retryBusy } from '../../store/busy.ts';
import type { Clock } from '../../clock/clock.ts';
import { every } from '../../clock/every.ts';
import { errorAttrs, type Logger } from '../../log/logger.ts';
import { seal, UnsealError } from '../../core/vault/seal.ts';
import type { ChallengeBoard } from '../../core/tls/acme-challenges.ts';
import { GatewayError } from '../../http/errors.ts';
import type { AcmeChallengeType } from './sources/acme.ts';
import { obtain, type Obtained } from './sources/obtained.ts';
import { accountContext, authoritySecrets } from './acme-authorities.ts';
import { keyContext } from './records.ts';
import { readTlsSettings } from './tls-settings.ts';
import { ACME_CHECK_MS, ACME_RENEW_FRACTION } from './messages.ts';

export interface IssuerOptions {
  readonly store: Store;
  readonly masterKey: Buffer;
  readonly clock: Clock;
  readonly log: Logger;
  readonly licensed: boolean;
  /** Where the challenge answers go (relayed to the main thread's doors). */
  readonly board: ChallengeBoard;
  /** Reloads this node's snapshot once a result is written. */
  publish(): Promise<void>;
}

export interface AcmeIssuer {
  request(id: string): void;
  stop(): Promise<void>;
}

type Outcome =
  | { readonly id: string; readonly renewing: boolean; readonly issued: Obtained }
  | { readonly id: string; readonly renewing: boolean; readonly refusal: { detail: string; fault: boolean } };

/** An issuance in flight is waited for this long at stop; past it the store closes under it. */
const STOP_WAIT_MS = 10_000;
const PLACED_ON = ['console', 'app'];

/** True when `row` needs the authority: no certificate yet, or less than a third of its lifetime left. */
export function needsIssuance(row: Pick<CertificateRow, 'certPem' | 'notBefore' | 'notAfter'>, nowMs: number): boolean {
  if (!row.certPem || row.notAfter == null || row.notBefore == null) return true;
  const now = Math.floor(nowMs / 1000);
  return row.notAfter - now < (row.notAfter - row.notBefore) * ACME_RENEW_FRACTION;
}

/** The sentence kept in the row for a failed order, and whether it is the gateway's own fault. */
function refusalOf(err: unknown): { detail: string; fault: boolean } {
  if (err instanceof GatewayError) return { detail: err.detail, fault: false };
  if (err instanceof UnsealError) return { detail: `${err.message}; the order cannot be asked from this node.`, fault: false };
  return { detail: `The order could not be completed: ${err instanceof Error ? err.message : String(err)}`, fault: true };
}

export function startAcmeIssuer(opts: IssuerOptions): AcmeIssuer {
  const { store, clock, log } = opts;
  const queue: string[] = [];
  let running: Promise<void> | undefined;
  let stopped = false;

  /** Asks the authority when the order still needs it, and writes the result through `save`. */
  const attempt = async (em: EntityManager, id: string, save: (fn: (em: EntityManager) => Promise<void>) => Promise<void>): Promise<Outcome | undefined> => {
    const row = await em.findOne(CertificateRow, { id, source: 'acme' });
    if (!row || !needsIssuance(row, clock.now())) return undefined;
    const planes = (await em.find(PlacementRow, { certificateId: id, plane: { $in: PLACED_ON } })).map((p) => p.plane);
    if (planes.length === 0) return undefined;
    // A plane whose plain HTTP is off listens on 127.0.0.1 only: the authority's HTTP-01 request
    // cannot reach it, so where every plane of the order is so, its HTTPS door answers (TLS-ALPN-01).
    const { httpOff } = await readTlsSettings(em);
    const httpClosed = planes.every((p) => (httpOff as readonly string[]).includes(p));
    const authority = row.authority ? await em.findOne(AcmeAuthorityRow, { id: row.authority }) : null;
    const renewing = row.certPem !== null;
    let issued: { obtained: Obtained; accountKey: string; accountUrl: string; directory: string } | undefined;
    let refusal: { detail: string; fault: boolean } | undefined;
    try {
      if (!authority) throw new GatewayError('acme.authority-unknown', 'The authority of this order no longer exists.');
      const secrets = await authoritySecrets(em, opts.masterKey, authority);
      log.info(renewing ? 'acme renewal asked' : 'acme order asked', { certificate: id, authority: authority.name, names: row.names.join(', ') });
      // acme-client loads on first use: a gateway with no order never pays for it.
      const { issueCertificate } = await import('./sources/acme.ts');
      const got = await issueCertificate({
        directory: authority.directory, ...(authority.rootCa ? { rootCa: authority.rootCa } : {}),
        ...(secrets.accountKey !== undefined ? { accountKey: secrets.accountKey } : {}),
        ...(authority.email ? { email: authority.email } : {}), ...(secrets.eab ? { eab: secrets.eab } : {}),
        termsAccepted: authority.termsAccepted, names: row.names, challenges: opts.board,
        preferred: httpClosed ? 'tls-alpn-01' : authority.challenge as AcmeChallengeType,
        log: (msg, attrs) => log.info(msg, { certificate: id, ...attrs }),
      });
      issued = { obtained: obtain(got.cert, got.key, { cert: 'cert', key: 'key' }), accountKey: got.accountKey, accountUrl: got.accountUrl, directory: authority.directory };
    } catch (err) {
      refusal = refusalOf(err);
    }
    const now = clock.now();
    await save(async (tx) => {
      if (issued) {
        const o = issued.obtained;
        const moved = await tx.nativeUpdate(CertificateRow, { id }, {
          names: [...o.names], issuer: o.issuer, notBefore: o.notBefore, notAfter: o.notAfter, fingerprint: o.fingerprint,
          certPem: o.certPem, keySealed: seal(opts.masterKey, keyContext(id), o.keyPem), status: null, detail: null, updatedAt: now,
        });
        if (moved === 0) return; // deleted meanwhile: nothing to keep
        // The first order's account is kept, unless the directory moved meanwhile (its account is another).
        await tx.nativeUpdate(AcmeAuthorityRow, { id: authority!.id, directory: issued.directory, accountKeySealed: null }, {
          accountKeySealed: seal(opts.masterKey, accountContext(authority!.id), issued.accountKey), accountUrl: issued.accountUrl,
        });
      } else {
        const detail = renewing ? `Renewal refused; the current certificate serves until it expires. ${refusal!.detail}` : refusal!.detail;
        if ((await tx.nativeUpdate(CertificateRow, { id }, { status: 'refused', detail, updatedAt: now })) === 0) return;
      }
      await tx.insert(Change, { kind: 'tls', at: now });
    });
    return issued ? { id, renewing, issued: issued.obtained } : { id, renewing, refusal: refusal! };
  };

  /** Said and published once the result is committed (under PostgreSQL's lock, after its commit). */
  const report = async (o: Outcome): Promise<void> => {
    if ('issued' in o) {
      log.info(o.renewing ? 'acme certificate renewed' : 'acme certificate issued', { certificate: o.id, names: o.issued.names.join(', '), notAfter: o.issued.notAfter, fingerprint: o.issued.fingerprint });
    } else if (o.refusal.fault) {
      log.error('acme order failed', { certificate: o.id, detail: o.refusal.detail });
    } else {
      log.warn('acme order refused', { certificate: o.id, detail: o.refusal.detail });
    }
    await opts.publish();
  };

  const issueOne = async (id: string): Promise<void> => {
    let outcome: Outcome | undefined;
    if (store.driver === 'postgresql') {
      outcome = await store.em().transactional(async (em) => {
        const [lock] = await em.getConnection().execute('select pg_try_advisory_xact_lock(hashtext(?)) as got', [`meerkat-acme:${id}`], 'all', em.getTransactionContext()) as Array<{ got?: unknown }>;
        if (lock?.got !== true) {
          log.debug('another node is asking for this certificate', { certificate: id });
          return undefined;
        }
        // The result commits with the lock's transaction: the next holder reads it.
        return attempt(em, id, (fn) => fn(em));
      });
    } else {
      outcome = await attempt(store.em(), id, (fn) => retryBusy(() => store.em().transactional(fn)));
    }
    if (outcome) await report(outcome);
  };

  const pump = (): void => {
    if (running || stopped) return;
    running = (async () => {
      for (let id = queue.shift(); id !== undefined && !stopped; id = queue.shift()) {
        try {
          await issueOne(id);
        } catch (err) {
          log.error('an acme order could not be handled; the next check tries again', { certificate: id, ...errorAttrs(err) });
        }
      }
    })().finally(() => {
      running = undefined;
      if (queue.length > 0) pump();
    });
  };

  const request = (id: string): void => {
    if (!opts.licensed || stopped || queue.includes(id)) return;
    queue.push(id);
    pump();
  };

  let warned = false;
  /** Every placed order that needs the authority, queued. */
  const check = async (): Promise<void> => {
    const em = store.em();
    const placed = new Set((await em.find(PlacementRow, { plane: { $in: PLACED_ON } })).map((p) => p.certificateId));
    const due = (await em.find(CertificateRow, { source: 'acme' })).filter((r) => placed.has(r.id) && needsIssuance(r, clock.now()));
    if (!opts.licensed) {
      if (due.length > 0 && !warned) log.warn('ACME orders are kept but not asked on the community edition: their certificates will not be issued or renewed', { orders: due.length });
      warned = due.length > 0;
      return;
    }
    for (const r of due) request(r.id);
  };

  const checking = every(clock, ACME_CHECK_MS, check, (err) => log.warn('acme orders could not be looked at; the next check tries again', errorAttrs(err)), { first: 'now' });

  return {
    request,
    stop: async () => {
      stopped = true;
      queue.length = 0;
      await checking.stop();
      if (running) await Promise.race([running, new Promise((resolve) => setTimeout(resolve, STOP_WAIT_MS).unref())]);
    },
  };
}
