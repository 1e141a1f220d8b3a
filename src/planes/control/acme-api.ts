/**
 * ACME authorities on the control plane (spec 1.2 rule 19, 2.5 "ACME authority"; CONTRACT.md
 * "TLS"), licensed edition: the community edition answers 403 `licensed-edition`. An answer
 * never carries an HMAC key or an account key: `eab.hmacKey` shows the `$name` reference as
 * written, or `sealed`. Infra admins (and root) manage them; orders are certificates
 * (`POST /api/certificates {source: "acme", authority, names}`).
 */
import type { Router } from '../../http/router.ts';
import type { AcmeAuthorityInput, AcmeAuthorityRecord } from '../../actors/certs/messages.ts';
import type { GatewayContext } from '../context.ts';
import { callerOf, type Principal } from '../principal.ts';
import { requireLicensed } from '../edition.ts';
import { requireCapability } from './auth.ts';
import { idParam, listOf, notFound, seconds, TIMES, WRITE_REFUSALS } from './resource-docs.ts';
import { GatewayError } from '../../http/errors.ts';
import { SEALED } from '../../core/tls/acme-authority.ts';

const TAGS = ['tls', 'acme'];
const BASE = '/api/acme/authorities';
const FEATURE = 'ACME issuance (authorities and their orders)';

const EAB = {
  type: ['object', 'null'],
  description: 'External Account Binding, for authorities that ask for one',
  properties: {
    kid: { type: 'string', description: 'the key id the authority gave' },
    hmacKey: { type: 'string', description: 'written: the HMAC key (base64url, kept sealed) or a $name vault reference; answered: the reference, or "sealed". Left out (or "sealed") on a PUT: the stored key stays. Naming a vault value, or keeping a stored reference, needs app-admin besides infra-admin (403 capability)' },
  },
} as const;

const WRITTEN = {
  type: 'object',
  required: ['name', 'directory', 'termsAccepted'],
  properties: {
    name: { type: 'string', description: 'a label of 1 to 100 characters; orders are named "Ask <name>"' },
    directory: { type: 'string', description: 'the ACME directory URL (https)' },
    rootCa: { type: ['string', 'null'], description: 'PEM of the authority signing the ACME server\'s HTTPS certificate (a private authority)' },
    email: { type: ['string', 'null'], description: 'the account\'s contact address' },
    eab: EAB,
    termsAccepted: { type: 'boolean', description: 'the authority\'s terms of service accepted; never assumed' },
    challenge: { type: 'string', enum: ['http-01', 'tls-alpn-01'], description: 'tried first when offered (default http-01; tls-alpn-01 needs the plane\'s HTTPS door open, i.e. a certificate already served there)' },
  },
} as const;

const AUTHORITY = {
  type: 'object',
  description: 'An ACME authority. Never carries an HMAC key or an account key.',
  required: ['id', 'name', 'directory', 'rootCa', 'email', 'eab', 'termsAccepted', 'challenge', 'accountUrl', 'orders', 'armed', 'createdAt', 'updatedAt'],
  properties: {
    id: { type: 'string' }, ...WRITTEN.properties,
    // Answered, a binding has both members: hmacKey is the reference or "sealed", never left out.
    eab: { ...EAB, required: ['kid', 'hmacKey'] },
    accountUrl: { type: ['string', 'null'], description: 'the account the authority gave at the first order (a new directory starts a fresh one)' },
    orders: { type: 'integer', description: 'orders (certificates) asking this authority' },
    armed: { type: 'boolean', description: 'an order of it is placed on the console or the application' },
    ...TIMES,
  },
} as const;

function body(r: AcmeAuthorityRecord): Record<string, unknown> {
  return { ...r, createdAt: seconds(r.createdAt), updatedAt: seconds(r.updatedAt) };
}

/**
 * An authority whose EAB HMAC key is a vault reference signs with that vault value and sends the
 * signature to the directory the authority names: writing one, or keeping a stored one across a
 * change, is using the application's vault, which is app-admin's (vault-api.ts). Checked before
 * the name is looked up, so an infra-admin learns nothing of what the vault holds.
 */
async function requireVaultRight(principal: Principal, written: unknown, stored: () => Promise<AcmeAuthorityRecord | null>): Promise<void> {
  const eab = typeof written === 'object' && written !== null ? (written as { eab?: unknown }).eab : undefined;
  if (typeof eab !== 'object' || eab === null) return;
  const hmacKey = (eab as { hmacKey?: unknown }).hmacKey;
  const names = typeof hmacKey === 'string' && hmacKey.startsWith('$');
  // The stored authority is read only when the written key keeps it.
  const keeps = !names && (hmacKey === undefined || hmacKey === SEALED) && (await stored())?.eab?.hmacKey.startsWith('$') === true;
  if (!names && !keeps) return;
  try {
    requireCapability(principal, 'app-admin');
  } catch {
    throw new GatewayError('capability', 'An EAB HMAC key taken from the vault uses the application\'s vault, which needs the app-admin capability (or root); give the HMAC key itself.', 'eab.hmacKey');
  }
}

export function addAcmeApi(router: Router<Principal>, gw: GatewayContext): void {
  const allowed = (principal: Principal) => {
    requireCapability(principal, 'infra-admin');
    requireLicensed(gw.settings, FEATURE);
  };
  const one = async (id: string): Promise<AcmeAuthorityRecord> => {
    const found = (await gw.certs.call('acme.authority.list', null)).find((a) => a.id === id);
    if (!found) throw notFound('ACME authority', id);
    return found;
  };

  router.add('GET', BASE, {
    summary: 'List the ACME authorities (licensed edition)', tags: TAGS, auth: 'session',
    responses: { 200: { description: 'authorities', schema: listOf('authorities', AUTHORITY) }, 403: { description: 'capability, or licensed-edition' } },
  }, async (ctx) => {
    allowed(ctx.principal);
    return { body: { authorities: (await gw.certs.call('acme.authority.list', null)).map(body) } };
  });

  router.add('POST', BASE, {
    summary: 'Add an ACME authority (licensed edition)', tags: TAGS, auth: 'session',
    description: 'A named ACME account. Nothing is sent to the authority until an order of it is placed.',
    body: WRITTEN,
    responses: { 201: { description: 'created', schema: AUTHORITY }, ...WRITE_REFUSALS, 409: { description: 'acme.authority-taken' } },
  }, async (ctx) => {
    allowed(ctx.principal);
    const written = await ctx.json();
    await requireVaultRight(ctx.principal, written, async () => null);
    const created = await gw.certs.call('acme.authority.put', { id: null, authority: written as AcmeAuthorityInput }, callerOf(gw, ctx.principal, ctx.ex));
    return { status: 201, headers: { location: `${BASE}/${created!.id}` }, body: body(created!) };
  });

  router.add('GET', `${BASE}/{id}`, {
    summary: 'One ACME authority (licensed edition)', tags: TAGS, auth: 'session',
    responses: { 200: { description: 'the authority', schema: AUTHORITY }, 404: { description: 'no such authority' } },
  }, async (ctx) => {
    allowed(ctx.principal);
    return { body: body(await one(idParam(ctx.params, 'ACME authority'))) };
  });

  router.add('PUT', `${BASE}/{id}`, {
    summary: 'Replace an ACME authority (licensed edition); a new directory gets a fresh account', tags: TAGS, auth: 'session',
    body: WRITTEN,
    responses: { 200: { description: 'replaced', schema: AUTHORITY }, ...WRITE_REFUSALS, 404: { description: 'no such authority' }, 409: { description: 'acme.authority-taken' } },
  }, async (ctx) => {
    allowed(ctx.principal);
    const id = idParam(ctx.params, 'ACME authority');
    const written = await ctx.json();
    await requireVaultRight(ctx.principal, written, () => one(id));
    const put = await gw.certs.call('acme.authority.put', { id, authority: written as AcmeAuthorityInput }, callerOf(gw, ctx.principal, ctx.ex));
    if (!put) throw notFound('ACME authority', id);
    return { body: body(put) };
  });

  router.add('DELETE', `${BASE}/{id}`, {
    summary: 'Remove an ACME authority (licensed edition); refused while orders ask it', tags: TAGS, auth: 'session',
    responses: { 204: { description: 'removed' }, 404: { description: 'no such authority' }, 409: { description: 'acme.authority-in-use' } },
  }, async (ctx) => {
    allowed(ctx.principal);
    const id = idParam(ctx.params, 'ACME authority');
    if (!(await gw.certs.call('acme.authority.delete', { id }, callerOf(gw, ctx.principal, ctx.ex)))) throw notFound('ACME authority', id);
    return { status: 204 };
  });
}
