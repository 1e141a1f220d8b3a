import { ERRORS } from './errors.ts';
import type { ApiRoute, ResponseDoc, Router, Schema } from './router.ts';

export const PROBLEM_SCHEMA: Schema = {
  type: 'object',
  description: 'RFC 9457 problem document. `code` is stable; `detail` is the sentence a person reads.',
  required: ['type', 'title', 'status', 'detail', 'code'],
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    code: { type: 'string', enum: Object.keys(ERRORS) },
    field: { type: 'string', description: 'the request field at fault, for 400 answers' },
  },
};

/** A parameter's schema: the route's own when it declares one, any string otherwise. */
function schemaOf(r: ApiRoute<unknown>, name: string): Schema {
  return r.doc.schemas?.[name] ?? { type: 'string' };
}

/**
 * The refusals every operation of its kind can give, whether or not its own table names them: a
 * generated client must know each status it may meet. Declared answers win.
 */
function implied(r: ApiRoute<unknown>, hasParameters: boolean): Record<string, ResponseDoc> {
  const out: Record<string, ResponseDoc> = {};
  if (r.doc.body !== undefined || hasParameters) out[400] = { description: 'a field, a parameter or the body is refused (field.invalid with `field`, body.invalid-json, or the code of the rule)' };
  if (r.doc.auth !== 'none') {
    out[401] = { description: 'no credential, or one this plane does not know (unauthenticated)' };
    out[403] = { description: 'a credential of another kind or plane, or one without the right (token-kind, wrong-plane, capability, forbidden, licensed-edition)' };
  }
  if (r.segments.some((s) => s.startsWith('{'))) out[404] = { description: 'no such resource (within what the caller may see)' };
  if (r.doc.auth !== 'none') {
    // A credential is looked up in the database or by an actor: either may be away for a moment.
    out[503] = { description: 'the database or one of the gateway\'s actors cannot answer now (store.unavailable, actor.unavailable); try again' };
  }
  if (r.doc.body !== undefined) {
    out[411] = { description: 'the body was sent in chunks to a plain port, which reads a body only with its length stated (body.length-required; the connection closes with the answer)' };
    out[413] = { description: 'the body is larger than this endpoint accepts (body.too-large)' };
    out[415] = { description: 'the body is not application/json (body.media-type)' };
  }
  return out;
}

/** Builds the OpenAPI 3.1 document of one plane from its route table: it cannot drift. */
export function buildOpenApi(opts: {
  title: string;
  version: string;
  description: string;
  routes: readonly ApiRoute<unknown>[];
  /** The session of this plane: its cookie and where it is opened (the console's by default). */
  session?: { cookie: string; signIn: string };
}): Record<string, unknown> {
  const session = opts.session ?? { cookie: 'mk_session', signIn: 'POST /api/session' };
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of opts.routes) {
    const item = (paths[r.pattern] ??= {});
    const params: Array<Record<string, unknown>> = r.segments.filter((s) => s.startsWith('{')).map((s) => ({
      name: s.slice(1, -1), in: 'path', required: true, schema: schemaOf(r, s.slice(1, -1)),
    }));
    for (const [name, description] of Object.entries(r.doc.query ?? {})) {
      if (name.includes('<')) continue;
      params.push({ name, in: 'query', required: false, description, schema: schemaOf(r, name) });
    }
    const responses: Record<string, unknown> = {};
    for (const [status, resp] of Object.entries({ ...implied(r, params.length > 0), ...r.doc.responses })) {
      const problem = Number(status) >= 400;
      const headers: Record<string, unknown> = {};
      for (const [name, description] of Object.entries(resp.headers ?? {})) headers[name] = { description, schema: { type: 'string' } };
      if (status === '201' && headers.Location === undefined) headers.Location = { description: 'the address of what was created', schema: { type: 'string' } };
      responses[status] = {
        description: resp.description,
        ...(Object.keys(headers).length > 0 ? { headers } : {}),
        ...(resp.type !== undefined
          ? { content: { [resp.type]: { schema: { type: 'string' } } } }
          : resp.schema || problem
            ? { content: { [problem ? 'application/problem+json' : 'application/json']: { schema: resp.schema ?? { $ref: '#/components/schemas/Problem' } } } }
            : {}),
      };
    }
    item[r.method.toLowerCase()] = {
      summary: r.doc.summary,
      ...(r.doc.description ? { description: r.doc.description } : {}),
      ...(r.doc.tags ? { tags: r.doc.tags } : {}),
      operationId: `${r.method.toLowerCase()}${r.pattern.replace(/[{}]/g, '').replace(/[^a-zA-Z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      ...(params.length ? { parameters: params } : {}),
      security: r.doc.auth === 'none' ? [] : r.doc.auth === 'token' ? [{ bearer: [] }] : r.doc.sessionOnly ? [{ session: [] }] : [{ session: [] }, { bearer: [] }],
      ...(r.doc.body ? { requestBody: { required: r.doc.bodyOptional !== true, content: { 'application/json': { schema: r.doc.body } } } } : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: opts.title, version: opts.version, description: opts.description },
    paths,
    components: {
      schemas: { Problem: PROBLEM_SCHEMA },
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'An opaque token: mk_ followed by 43 base64url characters.' },
        session: { type: 'apiKey', in: 'cookie', name: session.cookie, description: `Session from ${session.signIn}. Unsafe methods also need a matching Origin header.` },
      },
    },
  };
}

/** What a generated client needs to know of the document itself: its top level (the rest is OpenAPI 3.1's own schema). */
const DOCUMENT_SCHEMA: Schema = {
  type: 'object',
  required: ['openapi', 'info', 'paths', 'components'],
  properties: {
    openapi: { type: 'string', const: '3.1.0' },
    info: { type: 'object', required: ['title', 'version', 'description'], properties: { title: { type: 'string' }, version: { type: 'string' }, description: { type: 'string' } } },
    // What is under these is OpenAPI's own (a Path Item, a Schema, a Security Scheme), free-form here.
    paths: { type: 'object', additionalProperties: { type: 'object', additionalProperties: true }, description: 'every operation of this plane, from its route table' },
    components: {
      type: 'object',
      required: ['schemas', 'securitySchemes'],
      properties: { schemas: { type: 'object', additionalProperties: true }, securitySchemes: { type: 'object', additionalProperties: true } },
    },
  },
};

/**
 * Serves the plane's document at `path` (`GET`, no credential), built from the router's table on
 * the first request, once every route is registered.
 */
export function addOpenApiDocument<P>(router: Router<P>, path: string, summary: string, doc: {
  title: string;
  version: string;
  description: string;
  session?: { cookie: string; signIn: string };
}): void {
  let document: Record<string, unknown> | undefined;
  router.add('GET', path, { summary, tags: ['meta'], auth: 'none', responses: { 200: { description: 'OpenAPI 3.1 document', schema: DOCUMENT_SCHEMA } } }, () => {
    document ??= buildOpenApi({ ...doc, routes: router.routes as never });
    return { body: document };
  });
}
