import { request } from 'undici';

export interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  /** The body parsed as JSON (undefined when it is not). */
  readonly json: any;
}

/** One HTTP exchange through a real socket; `body` objects are sent as JSON. */
export async function call(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: unknown; raw?: string | Buffer } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...opts.headers };
  let body: string | Buffer | undefined = opts.raw;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await request(url, { method: (opts.method ?? 'GET') as 'GET', headers, body });
  const text = await res.body.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers as Answer['headers'], text, json };
}

/** Signs in as root on the control plane; returns the Cookie header to send. */
export async function signIn(control: string, name: string, password: string): Promise<string> {
  const a = await call(`${control}/api/session`, { method: 'POST', body: { name, password }, headers: { origin: control } });
  if (a.status !== 200) throw new Error(`sign-in failed: ${a.status} ${a.text}`);
  const setCookie = a.headers['set-cookie'];
  const first = Array.isArray(setCookie) ? setCookie[0]! : setCookie!;
  return first.split(';')[0]!;
}
