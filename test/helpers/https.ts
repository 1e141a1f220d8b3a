/**
 * Calls through the gateway's HTTPS doors with node:https, choosing the server name (SNI) and the
 * Host header apart, and reading the certificate the door presented. Verification is off: the
 * tests check what is presented, not that a public authority vouches for it.
 */
import { request } from 'node:https';
import { connect, type PeerCertificate, type TLSSocket } from 'node:tls';
import type { Answer } from './http.ts';

export interface HttpsAnswer extends Answer {
  /** The leaf the door presented. */
  readonly peer: PeerCertificate;
}

export interface HttpsOptions {
  method?: string;
  headers?: Record<string, string>;
  /** Sent as JSON. */
  body?: unknown;
  /** The SNI name; none is sent for an IP address. */
  servername?: string;
}

/** One exchange on a fresh connection (no keep-alive, so every call is its own handshake). */
export function callHttps(url: string, opts: HttpsOptions = {}): Promise<HttpsAnswer> {
  const headers: Record<string, string> = { ...opts.headers };
  const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: opts.method ?? 'GET', headers, agent: false, rejectUnauthorized: false,
      ...(opts.servername !== undefined ? { servername: opts.servername } : {}),
    }, (res) => {
      const peer = (res.socket as TLSSocket).getPeerCertificate();
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = text ? JSON.parse(text) : undefined;
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json, peer });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The leaf a handshake asking `servername` gets from the door on `port` (127.0.0.1). */
export function presented(port: number, servername?: string): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ...(servername !== undefined ? { servername } : {}) }, () => {
      const peer = sock.getPeerCertificate();
      sock.end();
      resolve(peer);
    });
    sock.on('error', reject);
  });
}

/** A signed-in session on a console HTTPS door: its cookie and the https origin unsafe calls carry. */
export async function signInHttps(base: string, name: string, password: string): Promise<Record<string, string>> {
  const a = await callHttps(`${base}/api/session`, { method: 'POST', body: { name, password }, headers: { origin: base } });
  if (a.status !== 200) throw new Error(`sign-in over HTTPS failed: ${a.status} ${a.text}`);
  const setCookie = a.headers['set-cookie'];
  const first = Array.isArray(setCookie) ? setCookie[0]! : String(setCookie);
  return { cookie: first.split(';')[0]!, origin: base };
}
