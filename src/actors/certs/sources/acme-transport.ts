/**
 * How the ACME client reaches one authority: whose root CA it trusts for the directory's HTTPS,
 * and how long one request may take.
 *
 * acme-client 5.4 takes no per-client HTTPS agent: every `Client` sends through one axios
 * instance the module creates (`acme.axios`, its own `axios.create()`, not axios' global
 * defaults). Setting `acme.axios.defaults.httpsAgent` would make every issuance in the process
 * trust every authority's root CA, and two issuances at once would race on it. Instead one
 * request interceptor is installed on that instance, once, and it does nothing unless the request
 * is made inside `withAuthority()`: the issuance's agent travels in an AsyncLocalStorage, which
 * follows the issuance's own promise chain and no other. Two issuances at once therefore each
 * keep their own trust, and a request made outside an issuance is left as it was.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { X509Certificate } from 'node:crypto';
import { Agent, type RequestOptions } from 'node:https';
import type { Duplex } from 'node:stream';
import { rootCertificates } from 'node:tls';
import acme from 'acme-client';
import { invalidField } from '../../../http/errors.ts';

/** One request to the authority may take this long; a hung authority must not hang the order. */
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * The agent of one issuance. It keeps the latest socket error of its requests: once acme-client
 * has used up its retries of a request that got no answer, it throws a TypeError of its own
 * (it reads the missing response), and the cause (refused, timed out, certificate not trusted)
 * would otherwise be lost.
 */
export class AuthorityAgent extends Agent {
  lastSocketError: (Error & { code?: unknown }) | undefined;

  override createConnection(options: RequestOptions, callback?: (err: Error | null, stream: Duplex) => void): Duplex | null | undefined {
    const socket = super.createConnection(options, callback);
    socket?.once('error', (err: Error) => { this.lastSocketError = err; });
    return socket;
  }
}

const current = new AsyncLocalStorage<AuthorityAgent>();
let installed = false;

function install(): void {
  if (installed) return;
  installed = true;
  acme.axios.interceptors.request.use((config) => {
    const agent = current.getStore();
    if (agent === undefined) return config;
    config.httpsAgent = agent;
    if (!config.timeout) config.timeout = REQUEST_TIMEOUT_MS;
    return config;
  }, null, { synchronous: true });
}

/**
 * Runs `fn` with every ACME request it makes trusting the public roots plus `rootCa` (PEM, one
 * or several certificates) when given. The agent's sockets are closed when `fn` settles.
 */
export async function withAuthority<T>(rootCa: string | undefined, fn: (agent: AuthorityAgent) => Promise<T>): Promise<T> {
  if (rootCa !== undefined) {
    try {
      new X509Certificate(rootCa);
    } catch {
      throw invalidField('rootCa', 'rootCa must be the PEM certificate of the authority that signs the ACME server\'s HTTPS certificate.');
    }
  }
  install();
  const agent = new AuthorityAgent({ keepAlive: true, ...(rootCa !== undefined ? { ca: [...rootCertificates, rootCa] } : {}) });
  try {
    return await current.run(agent, () => fn(agent));
  } finally {
    agent.destroy();
  }
}

const UNTRUSTED = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'UNABLE_TO_GET_ISSUER_CERT', 'CERT_UNTRUSTED',
]);

/**
 * When `failure` is the authority not being reached (no answer came: refused, timed out, TLS not
 * trusted), the sentence that says so; undefined when the authority did answer. An answer the
 * authority gave arrives as a plain Error from acme-client, never as one of these.
 */
export function unreachable(failure: unknown, socketError: AuthorityAgent['lastSocketError'], directory: string): string | undefined {
  if (!(failure instanceof Error) || failure.constructor === Error) return undefined;
  const axios = (failure as { isAxiosError?: unknown; response?: unknown }).isAxiosError === true;
  if (axios && (failure as { response?: unknown }).response !== undefined) return undefined;
  const cause = axios ? failure as Error & { code?: unknown } : socketError;
  if (cause === undefined) return undefined;
  const code = typeof cause.code === 'string' ? cause.code : undefined;
  const where = `The ACME authority at ${directory} cannot be reached`;
  if (code !== undefined && UNTRUSTED.has(code)) {
    return `${where}: its HTTPS certificate is not trusted (${code}); give the authority's root CA.`;
  }
  if (code === 'ECONNABORTED' || code === 'ETIMEDOUT') return `${where}: it did not answer in time.`;
  const said = code === undefined || cause.message.includes(code) ? cause.message : `${code}, ${cause.message}`;
  return `${where}: ${said}.`;
}
