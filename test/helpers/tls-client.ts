/**
 * Real TLS clients for the HTTPS doors: a node:tls handshake that reports the certificate it was
 * shown, HTTPS (and plain HTTP) exchanges that keep the wire headers and the socket used, and the
 * `openssl s_client` and `curl` command lines. Child processes run asynchronously: the gateway
 * answers from this very process, so a synchronous child would wait on itself.
 */
import { connect as tlsConnect, type PeerCertificate, type TLSSocket } from 'node:tls';
import { connect as netConnect } from 'node:net';
import { request as httpsRequest, type Agent as HttpsAgent } from 'node:https';
import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';

/** What a door presented: the leaf's names, subject and SHA-256 fingerprint (node's spelling, as the API's). */
export interface Presented {
  readonly names: string[];
  readonly subjectAltName: string;
  readonly subject: string;
  readonly fingerprint: string;
  /** Verified against the CA given (false without one). */
  readonly authorized: boolean;
  readonly authorizationError: string | undefined;
}

export type HandshakeResult =
  | { readonly ok: true; readonly cert: Presented }
  | { readonly ok: false; readonly error: string; readonly code: string | undefined };

export interface TlsClientOptions {
  /** The SNI name; undefined sends none (the host is an IP address). */
  readonly servername?: string;
  /** PEM of the authority to verify with; without it the certificate is taken unverified. */
  readonly ca?: string;
}

function namesOf(san: string | undefined): string[] {
  if (!san) return [];
  return san.split(', ').map((entry) => entry.replace(/^(DNS|IP Address):/, ''));
}

export function presentedOf(cert: PeerCertificate, socket: TLSSocket): Presented {
  return {
    names: namesOf(cert.subjectaltname),
    subjectAltName: cert.subjectaltname ?? '',
    subject: [cert.subject?.CN ?? ''].flat()[0] ?? '',
    fingerprint: cert.fingerprint256,
    authorized: socket.authorized,
    authorizationError: socket.authorizationError === null || socket.authorizationError === undefined ? undefined : String(socket.authorizationError),
  };
}

/** One handshake with 127.0.0.1:`port`; the connection is closed once the certificate is read. */
export function handshake(port: number, opts: TlsClientOptions = {}, timeoutMs = 5000): Promise<HandshakeResult> {
  return new Promise((resolve) => {
    const socket = tlsConnect({
      host: '127.0.0.1', port, rejectUnauthorized: false,
      ...(opts.servername !== undefined ? { servername: opts.servername } : {}),
      ...(opts.ca !== undefined ? { ca: opts.ca } : {}),
    });
    const timer = setTimeout(() => { socket.destroy(); resolve({ ok: false, error: 'timed out', code: 'ETIMEDOUT' }); }, timeoutMs);
    socket.once('secureConnect', () => {
      clearTimeout(timer);
      const cert = presentedOf(socket.getPeerCertificate(), socket);
      socket.end();
      resolve({ ok: true, cert: opts.ca === undefined ? { ...cert, authorized: false } : cert });
    });
    socket.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({ ok: false, error: err.message, code: err.code });
    });
  });
}

/** Whether anything accepts TCP connections on 127.0.0.1:`port` ('refused' when nothing listens). */
export function tcpProbe(port: number): Promise<'open' | 'refused' | string> {
  return new Promise((resolve) => {
    const socket = netConnect(port, '127.0.0.1');
    socket.once('connect', () => { socket.destroy(); resolve('open'); });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED' ? 'refused' : err.code ?? err.message));
  });
}

export interface WireAnswer {
  readonly status: number;
  readonly headers: IncomingMessage['headers'];
  /** Header lines as received, lower-cased names: `content-length: 12`. */
  readonly headerLines: string[];
  readonly body: string;
  /** The client side's port of the connection that carried it. */
  readonly localPort: number;
  /** HTTPS only: the certificate of that connection. */
  readonly presented: Presented | undefined;
}

export interface CallOptions extends TlsClientOptions {
  readonly method?: string;
  readonly path?: string;
  /** The Host header; the SNI name by default. */
  readonly host?: string;
  readonly headers?: OutgoingHttpHeaders;
  readonly body?: string;
  /** A keep-alive agent to reuse connections; none: one connection per call. */
  readonly agent?: HttpsAgent;
}

function answerOf(res: IncomingMessage, secure: boolean): Promise<WireAnswer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = res.socket as TLSSocket;
    const localPort = socket.localPort ?? 0;
    const presented = secure ? presentedOf(socket.getPeerCertificate(), socket) : undefined;
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('error', reject);
    res.on('end', () => {
      const headerLines: string[] = [];
      for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) headerLines.push(`${res.rawHeaders[i]!.toLowerCase()}: ${res.rawHeaders[i + 1]}`);
      resolve({ status: res.statusCode ?? 0, headers: res.headers, headerLines, body: Buffer.concat(chunks).toString('utf8'), localPort, presented });
    });
  });
}

/**
 * One HTTPS exchange with the door on 127.0.0.1:`port`. With `ca` the certificate is verified
 * for the SNI name (a mismatch or an unknown authority rejects); without, it is not verified.
 */
export function httpsCall(port: number, opts: CallOptions = {}): Promise<WireAnswer> {
  return new Promise((resolve, reject) => {
    const host = opts.host ?? opts.servername;
    const req = httpsRequest({
      host: '127.0.0.1', port, method: opts.method ?? 'GET', path: opts.path ?? '/',
      headers: { ...(host !== undefined ? { host: `${host}:${port}` } : {}), ...opts.headers },
      rejectUnauthorized: opts.ca !== undefined,
      ...(opts.ca !== undefined ? { ca: opts.ca } : {}),
      ...(opts.servername !== undefined ? { servername: opts.servername } : {}),
      agent: opts.agent ?? false,
    }, (res) => answerOf(res, true).then(resolve, reject));
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** The same exchange on a plain door, to compare both doors' answers. */
export function plainCall(port: number, opts: Omit<CallOptions, 'servername' | 'ca' | 'agent'> = {}): Promise<WireAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      host: '127.0.0.1', port, method: opts.method ?? 'GET', path: opts.path ?? '/',
      headers: { ...(opts.host !== undefined ? { host: opts.host } : {}), ...opts.headers },
      agent: false,
    }, (res) => answerOf(res, false).then(resolve, reject));
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** The value of one header line of an answer, or undefined. */
export function headerLine(a: WireAnswer, name: string): string | undefined {
  const line = a.headerLines.find((l) => l.startsWith(`${name.toLowerCase()}: `));
  return line?.slice(name.length + 2);
}

interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function run(command: string, args: string[], input = '', timeoutMs = 10_000): Promise<Ran> {
  return new Promise((resolve) => {
    const child = execFile(command, args, { timeout: timeoutMs, encoding: 'utf8' }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
    child.stdin?.end(input);
  });
}

/** Runs `fn` with `pem` written to a temporary file, removed afterwards. */
async function withPemFile<T>(pem: string | undefined, fn: (path: string | undefined) => Promise<T>): Promise<T> {
  if (pem === undefined) return fn(undefined);
  const dir = mkdtempSync(join(tmpdir(), 'meerkat-ca-'));
  const path = join(dir, 'ca.pem');
  writeFileSync(path, pem);
  try {
    return await fn(path);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface SClientResult extends Ran {
  /** The `subject=` line of the leaf, e.g. `CN = app.example.test`; '' when the handshake failed. */
  readonly subject: string;
  /** The leaf's SHA-256 fingerprint, '' when none was shown. */
  readonly fingerprint: string;
  /** The `Verify return code` line's number, or -1. */
  readonly verify: number;
}

/** `openssl s_client` against 127.0.0.1:`port`, with `-servername` or `-noservername`. */
export function sClient(port: number, opts: { servername?: string; ca?: string } = {}): Promise<SClientResult> {
  return withPemFile(opts.ca, async (caFile) => {
    const args = ['s_client', '-connect', `127.0.0.1:${port}`,
      ...(opts.servername !== undefined ? ['-servername', opts.servername] : ['-noservername']),
      ...(caFile !== undefined ? ['-CAfile', caFile] : [])];
    const ran = await run('openssl', args);
    const pem = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(ran.stdout)?.[0];
    return {
      ...ran,
      subject: /^subject=\s*(.*)$/m.exec(ran.stdout)?.[1]?.trim() ?? '',
      fingerprint: pem ? new X509Certificate(pem).fingerprint256 : '',
      verify: Number(/Verify return code: (\d+)/.exec(ran.stdout)?.[1] ?? -1),
    };
  });
}

export interface CurlResult extends Ran {
  /** The answer's status (0 when none came). */
  readonly status: number;
  readonly body: string;
}

/** `curl --resolve <name>:<port>:127.0.0.1 --cacert <ca> https://<name>:<port><path>`. */
export function curlResolve(name: string, port: number, path: string, ca: string, extra: readonly string[] = []): Promise<CurlResult> {
  return withPemFile(ca, async (caFile) => {
    const marker = '\n--status:';
    const ran = await run('curl', ['-sS', ...extra, '--max-time', '8', '--resolve', `${name}:${port}:127.0.0.1`, '--cacert', caFile!,
      '-w', `${marker}%{http_code}`, `https://${name}:${port}${path}`]);
    const at = ran.stdout.lastIndexOf(marker);
    return { ...ran, status: at < 0 ? 0 : Number(ran.stdout.slice(at + marker.length)), body: at < 0 ? ran.stdout : ran.stdout.slice(0, at) };
  });
}
