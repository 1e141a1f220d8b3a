/**
 * The daily expiry digest (spec 1.2 rule 25, 6.2): once a day, the certificates expiring within
 * the horizon, then the expired ones, mailed to the administrators through GATEWAY_SMTP_URL, or
 * written as one operational log line when no mail server is set. In a cluster one node sends
 * it: the turn is claimed with a conditional update of its settings row, so every node may try.
 */
import type { Store } from '../../store/orm.ts';
import { SettingRow } from '../../store/entities.ts';
import type { Clock } from '../../clock/clock.ts';
import { every, type Loop } from '../../clock/every.ts';
import type { Logger } from '../../log/logger.ts';
import { errorAttrs } from '../../log/logger.ts';
import { buildDigest } from '../../core/tls/digest.ts';
import type { CertRecord } from './messages.ts';

export const DIGEST_EVERY_MS = 24 * 3600_000;
const KEY = 'tls.digest';

export interface DigestOptions {
  readonly store: Store;
  readonly clock: Clock;
  readonly log: Logger;
  readonly node: string;
  readonly mail: { readonly url: string; readonly from: string; readonly to: readonly string[] } | null;
  readonly horizonDays: number;
  readonly records: () => readonly CertRecord[];
}

/** True when this node takes today's turn (no node sent one in the last 23 h). */
async function claim(store: Store, now: number, node: string): Promise<boolean> {
  const em = store.em();
  const row = await em.findOne(SettingRow, { key: KEY });
  if (row && row.updatedAt > now - DIGEST_EVERY_MS + 3600_000) return false;
  if (!row) {
    try {
      await em.insert(SettingRow, { key: KEY, value: { node }, updatedAt: now, updatedBy: node });
      return true;
    } catch {
      return false; // another node inserted it first
    }
  }
  const moved = await em.nativeUpdate(SettingRow, { key: KEY, updatedAt: row.updatedAt }, { value: { node }, updatedAt: now, updatedBy: node });
  return moved === 1;
}

export async function sendDigest(opts: DigestOptions): Promise<'sent' | 'logged' | 'nothing' | 'not-our-turn'> {
  const now = opts.clock.now();
  const certs = opts.records().filter((r) => r.notAfter !== null).map((r) => ({ id: r.id, name: r.name, names: r.names, notAfter: r.notAfter!, planes: r.planes }));
  const digest = buildDigest(certs, Math.floor(now / 1000), opts.horizonDays);
  if (!digest) return 'nothing';
  if (!(await claim(opts.store, now, opts.node))) return 'not-our-turn';
  if (opts.mail && opts.mail.to.length > 0) {
    // nodemailer loads on the first digest mailed, not at every start.
    const { createMailer } = await import('../../core/mail/smtp.ts');
    await createMailer(opts.mail.url, opts.mail.from).send({ to: opts.mail.to, subject: digest.subject, text: digest.text });
    opts.log.info('certificate expiry digest mailed', { to: opts.mail.to.length, expiring: digest.expiring.length, expired: digest.expired.length });
    return 'sent';
  }
  opts.log.warn(digest.subject, { expiring: digest.expiring.map((e) => e.name).join(', '), expired: digest.expired.map((e) => e.name).join(', ') });
  return 'logged';
}

/** Runs the digest every day on the clock; a failure is reported and tried again the next day. */
export function startDigest(opts: DigestOptions): Loop {
  return every(opts.clock, DIGEST_EVERY_MS, async () => { await sendDigest(opts); }, (err) => opts.log.warn('the certificate expiry digest could not be sent; the next one tries again', errorAttrs(err)));
}
