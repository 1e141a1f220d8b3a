/**
 * ACME issuance (RFC 8555): one order for a set of names, answered with HTTP-01 or TLS-ALPN-01,
 * through a named authority (spec 1.2 rule 19). The certificate's key is ECDSA P-256, new at
 * each issuance. The caller keeps the account key (sealed, spec 1.2 rule 24) and the cluster
 * lock; this module holds no state between calls.
 */
import acme, { type Authorization, type Client } from 'acme-client';
import { GatewayError, invalidField } from '../../../http/errors.ts';
import type { AlpnAnswer, ChallengeBoard } from '../../../core/tls/acme-challenges.ts';
import { unreachable, withAuthority, type AuthorityAgent } from './acme-transport.ts';

export type AcmeChallengeType = 'http-01' | 'tls-alpn-01';

export interface AcmeIssueOptions {
  /** The authority's directory URL. */
  readonly directory: string;
  /** PEM of the authority that signs the directory's HTTPS certificate, trusted besides the public roots. */
  readonly rootCa?: string;
  /**
   * PEM of the ACME account key; a new one is made when absent and returned. An account belongs
   * to one directory: when an authority's directory changes, the caller drops the old key and
   * passes none, so the new directory gets a fresh account (spec 1.2 rule 19).
   */
  readonly accountKey?: string;
  /** Contact e-mail of the account (some authorities require one). */
  readonly email?: string;
  /** External Account Binding (required by some authorities, ignored by others). */
  readonly eab?: { readonly kid: string; readonly hmacKey: string };
  /** The operator accepted the authority's terms of service: never assumed. */
  readonly termsAccepted: boolean;
  readonly names: readonly string[];
  /** Where the answers are posted while the authority validates (`AcmeChallenges` or a relay to it). */
  readonly challenges: ChallengeBoard;
  /** Tried first when the authority offers it for a name; default http-01. */
  readonly preferred?: AcmeChallengeType;
  readonly log?: (msg: string, attrs: Record<string, unknown>) => void;
}

export interface AcmeIssued {
  /** The certificate chain, leaf first (PEM). */
  readonly cert: string;
  /** The certificate's private key (PKCS#8 PEM). */
  readonly key: string;
  readonly accountKey: string;
  readonly accountUrl: string;
}

/** A new ACME account key: ECDSA P-256, PEM. */
export async function newAccountKey(): Promise<string> {
  return (await acme.crypto.createPrivateEcdsaKey('P-256')).toString();
}

type Challenge = Parameters<Client['completeChallenge']>[0];

/**
 * Orders a certificate for `names` and answers its challenges. Refusals: terms not accepted
 * (`acme.terms-not-accepted`, before anything is sent); the authority refuses (`acme.refused`,
 * with its own explanation); the authority cannot be reached (`acme.unreachable`).
 */
export async function issueCertificate(opts: AcmeIssueOptions): Promise<AcmeIssued> {
  if (!opts.termsAccepted) throw new GatewayError('acme.terms-not-accepted');
  const names = [...new Set(opts.names.map((n) => n.trim().toLowerCase()))];
  if (names.length === 0 || names.some((n) => n === '')) throw invalidField('names', 'An ACME order needs at least one name, none of them empty.');
  const log = opts.log ?? (() => undefined);
  const accountKey = opts.accountKey ?? await newAccountKey();
  try {
    return await withAuthority(opts.rootCa, async (agent) => {
      const client = new acme.Client({
        directoryUrl: opts.directory,
        accountKey,
        ...(opts.eab !== undefined ? { externalAccountBinding: { kid: opts.eab.kid, hmacKey: opts.eab.hmacKey } } : {}),
        // Polls a pending challenge or order from half a second up to ten, about a minute in all.
        backoffAttempts: 10,
        backoffMin: 500,
        backoffMax: 10_000,
      });
      // With a known key the authority answers with the existing account, which acme-client then
      // updates with this payload: an empty contact list (no e-mail now) is an update, where an
      // absent one would be refused as empty by some authorities.
      await ask(agent, () => client.createAccount({
        termsOfServiceAgreed: true,
        contact: opts.email !== undefined ? [`mailto:${opts.email}`] : [],
      }));
      const accountUrl = client.getAccountUrl();
      log('acme account ready', { directory: opts.directory, accountUrl });
      const order = await ask(agent, () => client.createOrder({ identifiers: names.map((value) => ({ type: 'dns', value })) }));
      const authorizations = await ask(agent, () => client.getAuthorizations(order));
      const ctx: OrderContext = { client, agent, board: opts.challenges, preferred: opts.preferred ?? 'http-01', log };
      // Every name settles before the order fails, so no answer is left posted behind it.
      const outcomes = await Promise.allSettled(authorizations.map((authz) => authorize(ctx, authz)));
      const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
      const certKey = await acme.crypto.createPrivateEcdsaKey('P-256');
      const first = names[0]!;
      const [, csr] = await acme.crypto.createCsr({ altNames: names, ...(first.length <= 64 ? { commonName: first } : {}) }, certKey);
      const finalized = await ask(agent, () => client.finalizeOrder(order, csr));
      const cert = await ask(agent, () => client.getCertificate(finalized));
      log('acme certificate issued', { directory: opts.directory, names });
      // The proofs are spent (RFC 8555 7.5.2): the next order proves control afresh, so a renewal
      // cannot ride on a cached authorization while the way it is answered is broken (HTTP
      // switched off, a door moved) and fail only once the authority stops reusing it.
      await Promise.allSettled(authorizations.map((authz) => client.deactivateAuthorization(authz)));
      return { cert, key: certKey.toString(), accountKey, accountUrl };
    });
  } catch (err) {
    throw refusal(err, opts.directory);
  }
}

interface OrderContext {
  readonly client: Client;
  readonly agent: AuthorityAgent;
  readonly board: ChallengeBoard;
  readonly preferred: AcmeChallengeType;
  readonly log: (msg: string, attrs: Record<string, unknown>) => void;
}

/** Proves control of one name: posts the answer, lets the authority validate, takes the answer down. */
async function authorize(ctx: OrderContext, authz: Authorization): Promise<void> {
  const name = authz.identifier.value;
  if (authz.status === 'valid') return;
  const challenge = choose(authz, ctx.preferred);
  const type = challenge.type as string;
  const keyAuthorization = await ctx.client.getChallengeKeyAuthorization(challenge);
  let alpn: AlpnAnswer | undefined;
  if (type === 'http-01') {
    await ctx.board.addHttp01(challenge.token, keyAuthorization);
  } else {
    const [key, cert] = await acme.crypto.createAlpnCertificate(authz, keyAuthorization, await acme.crypto.createPrivateEcdsaKey('P-256'));
    alpn = { cert: cert.toString(), key: key.toString() };
    await ctx.board.addAlpn01(name, alpn);
  }
  ctx.log('acme challenge posted', { name, challenge: type });
  const about = `${name} (${type})`;
  let completed = false;
  try {
    await ask(ctx.agent, () => ctx.client.completeChallenge(challenge), about);
    completed = true;
    await ask(ctx.agent, () => ctx.client.waitForValidStatus(challenge), about);
  } catch (err) {
    // An authorization left pending would be reused by the authority's next order for the name.
    if (!completed) await ctx.client.deactivateAuthorization(authz).catch(() => undefined);
    throw err;
  } finally {
    if (alpn !== undefined) await ctx.board.removeAlpn01(name, alpn);
    else await ctx.board.removeHttp01(challenge.token);
  }
  ctx.log('acme challenge valid', { name, challenge: type });
}

/** The preferred challenge type when offered, else the other one this gateway answers. */
function choose(authz: Authorization, preferred: AcmeChallengeType): Challenge {
  const order: readonly string[] = preferred === 'http-01' ? ['http-01', 'tls-alpn-01'] : ['tls-alpn-01', 'http-01'];
  for (const type of order) {
    const found = authz.challenges.find((c) => (c.type as string) === type);
    if (found !== undefined) return found;
  }
  const offered = authz.challenges.map((c) => c.type).join(', ') || 'none';
  throw new GatewayError('acme.refused', `The ACME authority offers no challenge this gateway answers for ${authz.identifier.value} (offered: ${offered}; answered: http-01, tls-alpn-01).`);
}

/** What went wrong while the authority was being asked, and about which name and challenge. */
class AuthorityFailure extends Error {
  constructor(readonly failure: unknown, readonly socketError: AuthorityAgent['lastSocketError'], readonly about: string | undefined) {
    super(failure instanceof Error ? failure.message : String(failure));
  }
}

/** Marks a failure as the authority's, so that a failure of the board or of ours is never called a refusal. */
async function ask<T>(agent: AuthorityAgent, call: () => Promise<T>, about?: string): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw new AuthorityFailure(err, agent.lastSocketError, about);
  }
}

/** What the caller sees: the authority's own explanation, or why it could not be reached. */
function refusal(err: unknown, directory: string): unknown {
  if (!(err instanceof AuthorityFailure)) return err;
  const down = unreachable(err.failure, err.socketError, directory);
  if (down !== undefined) return new GatewayError('acme.unreachable', down);
  // acme-client throws a plain Error carrying the problem document's detail when the authority
  // answered with a refusal; anything else (a TypeError, say) is a fault and stays one.
  const failure = err.failure;
  if (!(failure instanceof Error) || failure.constructor !== Error) return failure;
  const said = failure.message.trim() || 'no explanation given';
  return new GatewayError('acme.refused', `The ACME authority refused${err.about !== undefined ? ` ${err.about}` : ''}: ${said}`);
}
