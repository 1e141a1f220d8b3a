/**
 * Lists paged by an opaque cursor (CONTRACT.md "Schedules"): the answer is a JSON array, and when
 * more remain a `Link: <…>; rel="next"` header carries the next page's address.
 *
 * A cursor is the key of the last row returned, never an offset or a time: rows written or
 * removed between two pages shift nothing, so no row is skipped or repeated. It is base64url of
 * a JSON array (the list's name, then the key's parts) — opaque to clients, who only hand it back.
 */
import { GatewayError, invalidField } from './errors.ts';

type Part = 'string' | 'integer';
type Value<P extends Part> = P extends 'string' ? string : number;
/** The key's parts, as typed values. */
export type KeyOf<S extends readonly Part[]> = { -readonly [I in keyof S]: Value<S[I]> };

/** Longer than any key the lists write; a longer cursor is refused before it is decoded. */
const MAX_CURSOR = 512;
const MAX_STRING_PART = 200;

export interface CursorCodec<S extends readonly Part[]> {
  encode(key: KeyOf<S>): string;
  /** The key, or a `cursor.invalid` refusal naming the field `cursor`. */
  decode(raw: string): KeyOf<S>;
}

/**
 * A codec for one list's keys. The list's name travels in the cursor, so a cursor of another
 * list is refused rather than read as a key of the wrong shape.
 */
export function cursorCodec<const S extends readonly Part[]>(list: string, shape: S): CursorCodec<S> {
  const encode = (key: KeyOf<S>): string => Buffer.from(JSON.stringify([list, ...key]), 'utf8').toString('base64url');
  const refuse = (): never => {
    throw new GatewayError('cursor.invalid', undefined, 'cursor');
  };
  return {
    encode,
    decode(raw) {
      if (raw.length === 0 || raw.length > MAX_CURSOR || !/^[A-Za-z0-9_-]+$/.test(raw)) return refuse();
      let parsed: unknown;
      try {
        parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
      } catch {
        return refuse();
      }
      if (!Array.isArray(parsed) || parsed.length !== shape.length + 1 || parsed[0] !== list) return refuse();
      const key = parsed.slice(1);
      shape.forEach((part, i) => {
        const v: unknown = key[i];
        const ok = part === 'string'
          ? typeof v === 'string' && v.length > 0 && v.length <= MAX_STRING_PART
          : typeof v === 'number' && Number.isSafeInteger(v);
        if (!ok) refuse();
      });
      // One spelling per key: a cursor edited into another encoding of the same bytes is not ours.
      if (encode(key as KeyOf<S>) !== raw) return refuse();
      return key as KeyOf<S>;
    },
  };
}

export interface PageQuery<K> {
  readonly limit: number;
  /** Where the page starts (exclusive); null for the first page. */
  readonly after: K | null;
}

/** Reads `limit` and `cursor` from a list's query string. */
export function readPageQuery<S extends readonly Part[]>(
  query: URLSearchParams,
  codec: CursorCodec<S>,
  limits: { readonly max: number; readonly fallback: number },
): PageQuery<KeyOf<S>> {
  for (const name of ['limit', 'cursor']) {
    if (query.getAll(name).length > 1) throw invalidField(name, `${name} is given once.`);
  }
  const limitRaw = query.get('limit');
  const limit = limitRaw === null ? limits.fallback : /^\d{1,7}$/.test(limitRaw) ? Number(limitRaw) : NaN;
  if (!Number.isInteger(limit) || limit < 1 || limit > limits.max) {
    throw invalidField('limit', `limit is a whole number from 1 to ${limits.max} (default ${limits.fallback}).`);
  }
  const cursorRaw = query.get('cursor');
  return { limit, after: cursorRaw === null ? null : codec.decode(cursorRaw) };
}

/**
 * The `Link` header of the next page: a relative reference (path and query, RFC 8288 section 3.1)
 * that the client resolves against the address it called. The gateway cannot know the scheme and
 * host a client used (plain or HTTPS door, a proxy in front), so it writes neither. Every
 * parameter of the request stays (filters, `limit`); only `cursor` changes.
 */
export function nextLink(path: string, query: URLSearchParams, cursor: string): string {
  const next = new URLSearchParams(query);
  next.set('cursor', cursor);
  return `<${path}?${next.toString()}>; rel="next"`;
}
