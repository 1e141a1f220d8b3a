/**
 * Certificates on the control plane (spec 1.2 rules 1-3, 9-10, 20; CONTRACT.md "TLS"): held once,
 * placed on planes, never showing key material. Infra admins (and root) manage them.
 */
import type { Router } from '../../http/router.ts';
import type { Exchange } from '../../http/exchange.ts';
import { invalidField } from '../../http/errors.ts';
import type { CertRecord, NewCertificate, TlsPlane, Via } from '../../actors/certs/messages.ts';
import { listMountCertificates } from '../../actors/certs/sources/file.ts';
import { stateAt } from '../../actors/certs/state.ts';
import type { GatewayContext } from '../context.ts';
import { callerOf, type Principal } from '../principal.ts';
import { requireCapability } from './auth.ts';
import { requireLicensed } from '../edition.ts';
import { idParam, listOf, notFound, seconds, STRINGS, WRITE_REFUSALS } from './resource-docs.ts';

const TAGS = ['tls'];
const PLANES_SCHEMA = { type: 'array', items: { type: 'string', enum: ['console', 'app', 'internal'] } } as const;

export const CERTIFICATE = {
  type: 'object',
  description: 'A certificate. Never carries key material.',
  // paths is the file source's alone: left out for the others.
  required: ['id', 'name', 'names', 'issuer', 'notBefore', 'notAfter', 'expiresIn', 'source', 'planes', 'inactive', 'state', 'detail', 'fingerprint', 'createdAt'],
  properties: {
    id: { type: 'string' }, name: { type: 'string' }, names: STRINGS, issuer: { type: ['string', 'null'] },
    notBefore: { type: ['integer', 'null'], description: 'epoch seconds' }, notAfter: { type: ['integer', 'null'], description: 'epoch seconds' },
    expiresIn: { type: ['integer', 'null'], description: 'seconds until it expires (negative once expired)' },
    source: { type: 'string', enum: ['import', 'file', 'self-signed', 'csr', 'acme'] },
    planes: PLANES_SCHEMA, inactive: PLANES_SCHEMA,
    state: {
      type: 'string', enum: ['active', 'pending', 'expired', 'not-yet-valid', 'unsealable', 'requesting', 'refused', 'missing'],
      description: 'refused: an ACME order the authority refused, or a file-system renewal a placement rule holds back on a node that read no earlier pair. '
        + 'A renewal held back where an earlier pair was read stays active, the detail naming the rule.',
    },
    detail: { type: ['string', 'null'] }, fingerprint: { type: ['string', 'null'], description: 'SHA-256' },
    paths: { type: 'object', required: ['cert', 'key'], properties: { cert: { type: 'string' }, key: { type: 'string' } }, description: 'file source only' },
    createdAt: { type: 'integer' },
  },
} as const;

/** How the request reached the console: the safety rules count it (spec 1.2 rule 7). */
export function viaOf(ex: Exchange): Via {
  return { plane: 'console', door: ex.secure ? 'https' : 'http' };
}

export function certificateBody(gw: GatewayContext, r: CertRecord): Record<string, unknown> {
  const now = seconds(gw.clock.now());
  return { ...r, ...stateAt(r, now), expiresIn: r.notAfter === null ? null : r.notAfter - now, createdAt: seconds(r.createdAt) };
}

function newCertificate(gw: GatewayContext, body: unknown): NewCertificate {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalidField('source', 'Send an object with source and its fields.');
  const b = body as Record<string, unknown>;
  switch (b.source) {
    case 'import': case 'file': case 'self-signed': case 'csr':
      return b as unknown as NewCertificate;
    case 'acme':
      requireLicensed(gw.settings, 'ACME certificates (Ask <authority>)');
      return b as unknown as NewCertificate;
    default:
      throw invalidField('source', 'source is import {cert, key}, file {certPath, keyPath}, self-signed {names, days?}, csr {names, subject?} or acme {authority, names} (licensed edition).');
  }
}

export function addTlsApi(router: Router<Principal>, gw: GatewayContext): void {
  const record = (id: string): CertRecord => {
    const r = gw.certs.view.records.get(id);
    if (!r) throw notFound('certificate', id);
    return r;
  };

  router.add('GET', '/api/certificates', {
    summary: 'List the certificates, with their placements and expiry countdown', tags: TAGS, auth: 'session',
    responses: { 200: { description: 'certificates', schema: listOf('certificates', CERTIFICATE) } },
  }, (ctx) => {
    requireCapability(ctx.principal, 'infra-admin');
    return { body: { certificates: [...gw.certs.view.records.values()].map((r) => certificateBody(gw, r)) } };
  });

  router.add('GET', '/api/certificates/mounts', {
    summary: 'Mounts holding a certificate (file-system source); one without a key beside it cannot be picked', tags: TAGS, auth: 'session',
    description: 'Read from the gateway\'s mount table; process pseudo-files, the hosts and resolver files, the service-account token and the data directory are excluded. Only paths and what the certificates say are shown, never content.',
    responses: {
      200: {
        description: 'candidates',
        schema: {
          type: 'object',
          required: ['mounts'],
          properties: {
            mounts: {
              type: 'array',
              items: {
                type: 'object', description: 'a certificate file found on a mount',
                required: ['mount', 'certPath', 'keyPath', 'names', 'notAfter', 'pickable'],
                properties: {
                  mount: { type: 'string' }, certPath: { type: 'string' }, keyPath: { type: ['string', 'null'], description: 'the key beside it; null when none' },
                  names: STRINGS, notAfter: { type: 'integer', description: 'epoch seconds' }, pickable: { type: 'boolean', description: 'false without a key' },
                },
              },
            },
          },
        },
      },
    },
  }, (ctx) => {
    requireCapability(ctx.principal, 'infra-admin');
    const found = listMountCertificates(gw.settings.dataDir);
    return { body: { mounts: found.map((m) => ({ ...m, pickable: m.keyPath !== null })) } };
  });

  router.add('POST', '/api/certificates', {
    summary: 'Add a certificate: import, file, self-signed, signing request, or an ACME order (licensed)', tags: TAGS, auth: 'session',
    description: 'An ACME order {source: "acme", authority: <id or name>, names} is named "Ask <authority>" and stays in state requesting until issued; it is asked of the authority once placed on the console or the application (never the internal plane). '
      + 'A bundle (import, file, a signing request\'s answer) is stored and served leaf first, whatever its order; a certificate that signs nothing of the leaf\'s chain is refused (400 tls.chain-invalid).',
    body: {
      type: 'object', required: ['source'],
      description: 'The fields of each source: import {cert, key}; file {certPath, keyPath}; self-signed {names, days?}; csr {names, subject?}; acme {authority, names}.',
      properties: {
        source: { type: 'string', enum: ['import', 'file', 'self-signed', 'csr', 'acme'] },
        cert: { type: 'string', description: 'import: the certificate, PEM (a chain is allowed, leaf first or not)' },
        key: { type: 'string', description: 'import: its private key, PEM' },
        certPath: { type: 'string', description: 'file: path of the certificate file the runtime mounts and renews' },
        keyPath: { type: 'string', description: 'file: path of its key file' },
        names: { type: 'array', items: { type: 'string' }, description: 'self-signed, csr, acme: host names, one-label wildcards (*.example.com) or IP addresses' },
        days: { type: 'integer', minimum: 1, maximum: 3650, default: 365, description: 'self-signed: validity' },
        subject: { type: 'object', additionalProperties: false, properties: { organisation: { type: 'string' }, unit: { type: 'string' }, locality: { type: 'string' }, state: { type: 'string' }, country: { type: 'string', description: 'two letters' }, email: { type: 'string' } }, description: 'csr: the subject beside the names' },
        authority: { type: 'string', description: 'acme: the id or name of a trusted ACME authority (licensed edition)' },
      },
    },
    responses: { 201: { description: 'created', schema: CERTIFICATE }, ...WRITE_REFUSALS, 409: { description: 'acme.terms-not-accepted: an ACME order to an authority whose terms are not accepted (nothing was sent to it)' } },
  }, async (ctx) => {
    requireCapability(ctx.principal, 'infra-admin');
    const input = newCertificate(gw, await ctx.json());
    const created = await gw.certs.call('cert.create', input, callerOf(gw, ctx.principal, ctx.ex));
    return { status: 201, headers: { location: `/api/certificates/${created.id}` }, body: certificateBody(gw, created) };
  });

  router.add('GET', '/api/certificates/{id}', {
    summary: 'One certificate', tags: TAGS, auth: 'session',
    responses: { 200: { description: 'the certificate', schema: CERTIFICATE }, 404: { description: 'no such certificate' } },
  }, (ctx) => {
    requireCapability(ctx.principal, 'infra-admin');
    return { body: certificateBody(gw, record(idParam(ctx.params, 'certificate'))) };
  });

  router.add('DELETE', '/api/certificates/{id}', {
    summary: 'Remove a certificate (refused while it is a plane\'s last and HTTP is off, or the console\'s last in use)', tags: TAGS, auth: 'session',
    responses: { 204: { description: 'removed' }, 404: { description: 'no such certificate' }, 409: { description: 'tls.last-certificate (HTTP is off on a plane it serves, or the console was used over HTTPS in the last 30 s)' } },
  }, async (ctx) => {
    requireCapability(ctx.principal, 'infra-admin');
    const id = idParam(ctx.params, 'certificate');
    try {
      if (!(await gw.certs.call('cert.delete', { id, via: viaOf(ctx.ex) }, callerOf(gw, ctx.principal, ctx.ex)))) throw notFound('certificate', id);
    } finally {
      await gw.tlsDoors.reconcile();
    }
    return { status: 204 };
  });

  router.add('PUT', '/api/certificates/{id}/placement', {
    summary: 'Place a certificate on planes (the whole set); opens HTTPS doors, binding first', tags: TAGS, auth: 'session',
    body: { type: 'object', required: ['planes'], properties: { planes: PLANES_SCHEMA, replace: { type: 'boolean' } } },
    responses: {
      200: { description: 'placed', schema: CERTIFICATE }, ...WRITE_REFUSALS, 404: { description: 'no such certificate' },
      409: { description: 'tls.name-taken (another answers one of its names; replace: true), tls.bind-failed, tls.last-certificate (HTTP off there, or the console used over HTTPS in the last 30 s), tls.not-servable' },
    },
  }, async (ctx) => {
    requireCapability(ctx.principal, 'infra-admin');
    const id = idParam(ctx.params, 'certificate');
    const body = (await ctx.json()) as Record<string, unknown> | null;
    const planes = body?.planes;
    const replace = body?.replace ?? false;
    if (typeof replace !== 'boolean') throw invalidField('replace', 'replace is true or false.');
    if (!Array.isArray(planes)) throw invalidField('planes', 'planes is a list of console, app and internal.');
    // Whether it exists is the actor's to say, from the database: this node's view may not hold yet
    // a certificate another node made a moment ago.
    // Bind first: a door that cannot open refuses the placement before anything is written.
    const arriving = (planes as TlsPlane[]).filter((p) => ['console', 'app', 'internal'].includes(p));
    let placed: CertRecord | null;
    try {
      await gw.tlsDoors.prepare(arriving);
      placed = await gw.certs.call('cert.place', { id, planes: planes as TlsPlane[], replace, via: viaOf(ctx.ex) }, callerOf(gw, ctx.principal, ctx.ex));
    } finally {
      await gw.tlsDoors.reconcile();
    }
    if (!placed) throw notFound('certificate', id);
    return { body: certificateBody(gw, placed) };
  });

  router.add('GET', '/api/certificates/{id}/csr', {
    summary: 'Download a pending signing request again (PEM)', tags: TAGS, auth: 'session',
    responses: { 200: { description: 'the signing request, PEM', type: 'application/pkcs10' }, 404: { description: 'no such signing request' } },
  }, async (ctx) => {
    requireCapability(ctx.principal, 'infra-admin');
    const id = idParam(ctx.params, 'certificate');
    const csr = await gw.certs.call('cert.csr', { id });
    if (csr === null) throw notFound('signing request', id);
    return { raw: csr, headers: { 'content-type': 'application/pkcs10', 'content-disposition': `attachment; filename="${id}.csr"` } };
  });

  router.add('POST', '/api/certificates/{id}/answer', {
    summary: 'Adopt the authority\'s answer to a signing request (refused unless it matches the key)', tags: TAGS, auth: 'session',
    body: { type: 'object', required: ['cert'], properties: { cert: { type: 'string', description: 'PEM, chain allowed' } } },
    responses: { 200: { description: 'adopted', schema: CERTIFICATE }, ...WRITE_REFUSALS, 404: { description: 'no such signing request' }, 409: { description: 'tls.answer-adopted: this request has its answer already' } },
  }, async (ctx) => {
    requireCapability(ctx.principal, 'infra-admin');
    const id = idParam(ctx.params, 'certificate');
    const body = (await ctx.json()) as Record<string, unknown> | null;
    const adopted = await gw.certs.call('cert.answer', { id, cert: body?.cert as string }, callerOf(gw, ctx.principal, ctx.ex));
    if (!adopted) throw notFound('signing request', id);
    return { body: certificateBody(gw, adopted) };
  });
}
