import { GatewayError } from './errors.ts';
import type { Exchange } from './exchange.ts';

/** JSON Schema fragment, as placed into the OpenAPI document. */
export type Schema = Readonly<Record<string, unknown>>;

export interface RouteDoc {
  readonly summary: string;
  readonly description?: string;
  readonly tags?: readonly string[];
  /** Who may call: nobody needs to sign in, a console session or admin token, or a token only. */
  readonly auth: 'none' | 'session' | 'token';
  /** The operation serves a console session only, though the plane reads tokens too (the document's security). */
  readonly sessionOnly?: boolean;
  readonly body?: Schema;
  /** The body may be left out (the document's `requestBody.required`). */
  readonly bodyOptional?: boolean;
  /**
   * The query parameters read, name → what it does (all optional, strings on the wire). A name
   * holding `<` (`meta.<key>`) is a family of names: told in the description, not declared.
   */
  readonly query?: Readonly<Record<string, string>>;
  /** The schema of a path or query parameter that is narrower than any string (a whole number, one of a list). */
  readonly schemas?: Readonly<Record<string, Schema>>;
  /** Status → description, and the answer: JSON of `schema`, or a body of media `type`; `headers` it carries. */
  readonly responses: Readonly<Record<string, ResponseDoc>>;
}

export interface ResponseDoc {
  readonly description: string;
  readonly schema?: Schema;
  /** A media type other than JSON (an export, a signing request). */
  readonly type?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface ApiReply {
  readonly status?: number;
  readonly body?: unknown;
  /** Sent as it is instead of `body` as JSON (an export file); `headers` give its content-type. */
  readonly raw?: string | Uint8Array;
  /**
   * Sent piece by piece as it is made, without a length (an export too large to hold as one
   * string); `headers` give its content-type. A failure once it started cuts the answer.
   */
  readonly stream?: AsyncIterable<string>;
  readonly headers?: Readonly<Record<string, string | readonly string[]>>;
}

export interface RequestContext<P = unknown> {
  readonly ex: Exchange;
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  /** Who is calling, as the plane authenticated them. */
  readonly principal: P;
  /** The body parsed as JSON (refused with a problem when it is not). */
  json(): Promise<unknown>;
}

export type ApiHandler<P> = (ctx: RequestContext<P>) => Promise<ApiReply> | ApiReply;

export interface ApiRoute<P> {
  readonly method: string;
  readonly pattern: string;
  readonly doc: RouteDoc;
  readonly handler: ApiHandler<P>;
  readonly segments: readonly string[];
}

export type Match<P> =
  | { readonly kind: 'found'; readonly route: ApiRoute<P>; readonly params: Record<string, string> }
  | { readonly kind: 'method'; readonly allowed: readonly string[] }
  | { readonly kind: 'none' };

/** Splits and percent-decodes a path; a malformed escape is the caller's fault, not ours. */
export function pathSegments(path: string): string[] {
  try {
    return path.split('/').slice(1).map((s) => decodeURIComponent(s));
  } catch {
    throw new GatewayError('path.invalid');
  }
}

/** A small method + path router; `{name}` segments capture one decoded segment. */
export class Router<P> {
  private readonly table: ApiRoute<P>[] = [];

  add(method: string, pattern: string, doc: RouteDoc, handler: ApiHandler<P>): this {
    this.table.push({ method, pattern, doc, handler, segments: pattern.split('/').slice(1) });
    return this;
  }

  get routes(): readonly ApiRoute<P>[] {
    return this.table;
  }

  match(method: string, path: string): Match<P> {
    const segs = pathSegments(path);
    const allowed: string[] = [];
    for (const route of this.table) {
      const params = matchSegments(route.segments, segs);
      if (!params) continue;
      if (route.method === method || (method === 'HEAD' && route.method === 'GET')) {
        return { kind: 'found', route, params };
      }
      allowed.push(route.method);
    }
    return allowed.length > 0 ? { kind: 'method', allowed } : { kind: 'none' };
  }
}

function matchSegments(pattern: readonly string[], segs: readonly string[]): Record<string, string> | undefined {
  if (pattern.length !== segs.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!;
    const s = segs[i]!;
    if (p.startsWith('{') && p.endsWith('}')) {
      if (s === '') return undefined;
      params[p.slice(1, -1)] = s;
    } else if (p !== s) {
      return undefined;
    }
  }
  return params;
}
