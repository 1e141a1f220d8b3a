import { ERRORS } from './errors.ts';
import type { ApiRoute, Schema } from './router.ts';

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

/** Builds the OpenAPI 3.1 document of one plane from its route table: it cannot drift. */
export function buildOpenApi(opts: {
  title: string;
  version: string;
  description: string;
  routes: readonly ApiRoute<unknown>[];
}): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of opts.routes) {
    const item = (paths[r.pattern] ??= {});
    const params: Array<Record<string, unknown>> = r.segments.filter((s) => s.startsWith('{')).map((s) => ({
      name: s.slice(1, -1), in: 'path', required: true, schema: { type: 'string' },
    }));
    for (const [name, description] of Object.entries(r.doc.query ?? {})) {
      params.push({ name, in: 'query', required: false, description, schema: { type: 'string' } });
    }
    const responses: Record<string, unknown> = {};
    for (const [status, resp] of Object.entries(r.doc.responses)) {
      const problem = Number(status) >= 400;
      responses[status] = {
        description: resp.description,
        ...(resp.schema || problem
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
      security: r.doc.auth === 'none' ? [] : r.doc.auth === 'token' ? [{ bearer: [] }] : [{ session: [] }, { bearer: [] }],
      ...(r.doc.body ? { requestBody: { required: true, content: { 'application/json': { schema: r.doc.body } } } } : {}),
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
        session: { type: 'apiKey', in: 'cookie', name: 'mk_session', description: 'Console session from POST /api/session. Unsafe methods also need a matching Origin header.' },
      },
    },
  };
}
