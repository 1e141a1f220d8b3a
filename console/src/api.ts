/**
 * The console's one way to the control plane's API: JSON in and out, the session cookie sent by
 * the browser, and a refusal turned into an ApiError carrying the API's own sentence (`detail`),
 * which the screens show as is (CONTRACT.md "Console": errors show the API's detail sentence).
 */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly field?: string,
  ) {
    super(detail);
  }
}

/** Told when an answer says the session is gone (401), so the application returns to sign-in. */
let onSignedOut: () => void = () => {};
export function whenSignedOut(fn: () => void): void {
  onSignedOut = fn;
}

export interface Page<T> {
  readonly items: T[];
  /** The next page's address (from the Link header), or null on the last page. */
  readonly next: string | null;
}

async function problemOf(res: Response): Promise<ApiError> {
  try {
    const p = (await res.json()) as { code?: string; detail?: string; title?: string; field?: string };
    return new ApiError(res.status, p.code ?? 'unknown', p.detail ?? p.title ?? `The gateway answered ${res.status}.`, p.field);
  } catch {
    return new ApiError(res.status, 'unknown', `The gateway answered ${res.status} ${res.statusText}.`);
  }
}

async function send(method: string, path: string, body?: unknown): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'network', 'The gateway cannot be reached; check the connection and try again.');
  }
  if (res.ok) return res;
  const err = await problemOf(res);
  if (res.status === 401 && path !== '/api/session') onSignedOut();
  throw err;
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await send(method, path, body);
  if (res.status === 204) return undefined as T;
  const type = res.headers.get('content-type') ?? '';
  return (type.includes('json') ? await res.json() : await res.text()) as T;
}

export const get = <T>(path: string) => api<T>('GET', path);

/** A list answered as a JSON array with a `Link: <…>; rel="next"` header when more remain. */
export async function getPage<T>(path: string): Promise<Page<T>> {
  const res = await send('GET', path);
  const items = (await res.json()) as T[];
  const link = res.headers.get('link');
  const next = link?.match(/<([^>]+)>\s*;\s*rel="next"/)?.[1] ?? null;
  if (next === null) return { items, next: null };
  // A relative reference, resolved against the address called (RFC 8288).
  const url = new URL(next, new URL(path, location.origin));
  return { items, next: url.pathname + url.search };
}

/** A query string of the non-empty values, in the order given. */
export function query(values: Record<string, string | number | boolean | null | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(values)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** Downloads an answer as a file the operator saves (exports). */
export async function download(path: string, fallbackName: string): Promise<void> {
  const res = await send('GET', path);
  const name = res.headers.get('content-disposition')?.match(/filename="?([^";]+)"?/)?.[1] ?? fallbackName;
  saveBlob(await res.blob(), name);
}

export function saveBlob(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
