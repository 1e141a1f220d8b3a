import type { Router } from '../../http/router.ts';
import { AUTHORITY_NAME_MAX, parseAuthority } from '../../core/tls/authorities.ts';
import type { AuthorityRecord } from '../../actors/config/messages.ts';
import type { GatewayContext } from '../context.ts';
import { callerOf, type Principal } from '../principal.ts';
import { requireCapability } from './auth.ts';
import { idParam, listOf, notFound, STRINGS, WRITE_REFUSALS } from './resource-docs.ts';

const CAPABILITY = 'infra-admin';
const TAGS = ['tls'];

const AUTHORITY = {
  type: 'object',
  required: ['id', 'name', 'subjects', 'notAfter', 'fingerprint', 'count'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    subjects: { ...STRINGS, description: 'the subject of each certificate, in the order of the PEM' },
    notAfter: { type: 'integer', description: 'epoch seconds: the earliest end of validity among the certificates' },
    fingerprint: { type: 'string', description: 'SHA-256 of the first certificate, hex pairs joined by colons' },
    count: { type: 'integer', description: 'how many certificates the PEM holds' },
  },
} as const;

const authorityBody = (a: AuthorityRecord) => ({
  id: a.id, name: a.name, subjects: a.subjects, notAfter: a.notAfter, fingerprint: a.fingerprint, count: a.count,
});

/**
 * Trusted authorities (spec 1.2 rule 22): the certificates, beside the public ones, that the
 * chain of an https upstream may lead to. A change reaches this node's calls before the answer,
 * and every other node's within a second.
 */
export function addAuthoritiesApi(router: Router<Principal>, gw: GatewayContext): void {
  router.add('POST', '/api/trusted-authorities', {
    summary: 'Add a trusted authority', tags: TAGS, auth: 'session',
    description: 'https upstreams are verified against the public authorities the gateway carries plus these; the certificate must still carry the host of the route\'s upstream. The PEM may hold several certificates, and nothing else: a private key of any kind is refused (tls.key-in-authority). Root or infra-admin.',
    body: {
      type: 'object', required: ['name', 'pem'], additionalProperties: false,
      properties: {
        name: { type: 'string', minLength: 1, maxLength: AUTHORITY_NAME_MAX, description: 'unique' },
        pem: { type: 'string', description: 'one or several certificates, PEM (-----BEGIN CERTIFICATE-----)' },
      },
    },
    responses: {
      201: { description: 'added', schema: AUTHORITY }, ...WRITE_REFUSALS,
      409: { description: 'a trusted authority has this name already (tls.authority-name-taken)' },
    },
  }, async (ctx) => {
    requireCapability(ctx.principal, CAPABILITY);
    const input = parseAuthority(await ctx.json());
    const created = await gw.config.call('authority.create', input, callerOf(gw, ctx.principal, ctx.ex));
    return { status: 201, headers: { location: `/api/trusted-authorities/${created.id}` }, body: authorityBody(created) };
  });

  router.add('GET', '/api/trusted-authorities', {
    summary: 'List the trusted authorities', tags: TAGS, auth: 'session',
    responses: { 200: { description: 'every authority added, by name', schema: listOf('authorities', AUTHORITY) }, 401: WRITE_REFUSALS[401], 403: WRITE_REFUSALS[403] },
  }, async (ctx) => {
    requireCapability(ctx.principal, CAPABILITY);
    return { body: { authorities: (await gw.config.call('authority.list', null)).map(authorityBody) } };
  });

  router.add('GET', '/api/trusted-authorities/{id}', {
    summary: 'One trusted authority', tags: TAGS, auth: 'session',
    responses: { 200: { description: 'the authority', schema: AUTHORITY }, 404: { description: 'no such authority' } },
  }, async (ctx) => {
    requireCapability(ctx.principal, CAPABILITY);
    const id = idParam(ctx.params, 'trusted authority');
    const found = (await gw.config.call('authority.list', null)).find((a) => a.id === id);
    if (!found) throw notFound('trusted authority', id);
    return { body: authorityBody(found) };
  });

  router.add('DELETE', '/api/trusted-authorities/{id}', {
    summary: 'Remove a trusted authority', tags: TAGS, auth: 'session',
    description: 'New calls to https upstreams stop trusting it at once; calls in flight finish.',
    responses: { 204: { description: 'removed' }, 404: { description: 'no such authority' } },
  }, async (ctx) => {
    requireCapability(ctx.principal, CAPABILITY);
    const id = idParam(ctx.params, 'trusted authority');
    if (!(await gw.config.call('authority.delete', { id }, callerOf(gw, ctx.principal, ctx.ex)))) throw notFound('trusted authority', id);
    return { status: 204 };
  });
}
