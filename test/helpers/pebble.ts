/**
 * A real ACME authority for tests: Pebble (the Debian package's `pebble`) on loopback, with
 * `pebble-challtestsrv` as its DNS server, so the names a test declares resolve to 127.0.0.1 and
 * nothing else resolves at all (no default A or AAAA answer: a name the test forgot fails loudly).
 *
 * Pebble's HTTPS listener gets a certificate made here with the openssl CLI in a temporary
 * directory; the CA that signed it is `rootCa`, what an ACME authority record carries. Pebble
 * validates HTTP-01 on `httpPort` and TLS-ALPN-01 on `tlsPort`: the ports where the test serves
 * its answers. Neither program takes port 0, so free ports are picked by binding port 0 first;
 * should another process take one in between, the start is tried again on new ports.
 * Readiness is polled (the directory answers over HTTPS), never waited for by a fixed sleep.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { request as httpRequest } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface PebbleOptions {
  /** Where Pebble sends HTTP-01 validation requests. */
  readonly httpPort: number;
  /** Where Pebble opens TLS-ALPN-01 validation handshakes. */
  readonly tlsPort: number;
  /** Names resolved to 127.0.0.1 (more with `addNames`). */
  readonly names?: readonly string[];
  /** External Account Binding required, with these key ids and their HMAC keys (base64url). */
  readonly eab?: Readonly<Record<string, string>>;
}

export interface Pebble {
  /** The ACME directory URL. */
  readonly directory: string;
  /** PEM of the CA that signed Pebble's HTTPS certificate. */
  readonly rootCa: string;
  /** PEM of Pebble's issuing root (new at every start), to verify what it issued. */
  issuerRoots(): Promise<string>;
  /** Makes these names resolve to 127.0.0.1 for Pebble. */
  addNames(names: readonly string[]): Promise<void>;
  /** What Pebble and its DNS server printed (for a failing test's message). */
  output(): string;
  stop(): Promise<void>;
}

const READY_MS = 15_000;

export async function startPebble(opts: PebbleOptions): Promise<Pebble> {
  const dir = await mkdtemp(join(tmpdir(), 'pebble-'));
  try {
    const rootCa = await makeCertificates(dir);
    for (let attempt = 1; ; attempt++) {
      try {
        return await startOnce(dir, rootCa, opts);
      } catch (err) {
        if (attempt >= 3 || !(err instanceof PortTaken)) throw err;
      }
    }
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

class PortTaken extends Error {}

async function startOnce(dir: string, rootCa: string, opts: PebbleOptions): Promise<Pebble> {
  const [acmePort, mgmtPort, dnsPort, dnsMgmtPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const config = {
    pebble: {
      listenAddress: `127.0.0.1:${acmePort}`,
      managementListenAddress: `127.0.0.1:${mgmtPort}`,
      certificate: join(dir, 'pebble.pem'),
      privateKey: join(dir, 'pebble.key'),
      httpPort: opts.httpPort,
      tlsPort: opts.tlsPort,
      ocspResponderURL: '',
      externalAccountBindingRequired: opts.eab !== undefined,
      ...(opts.eab !== undefined ? { externalAccountMACKeys: opts.eab } : {}),
    },
  };
  const configPath = join(dir, `pebble-${acmePort}.json`);
  await writeFile(configPath, JSON.stringify(config));
  let out = '';
  const keep = (tag: string) => (d: Buffer) => { out = (out + d.toString().replace(/^(?=.)/gm, `${tag} `)).slice(-64_000); };
  const children: ChildProcess[] = [];
  const startChild = (cmd: string, args: string[], env: NodeJS.ProcessEnv, tag: string): ChildProcess => {
    const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', keep(tag));
    child.stderr!.on('data', keep(tag));
    children.push(child);
    // A test process that ends without its after() hook must not leave a CA running behind it.
    const orphaned = (): void => { child.kill('SIGKILL'); };
    process.once('exit', orphaned);
    child.once('exit', () => process.removeListener('exit', orphaned));
    return child;
  };
  const stop = async (): Promise<void> => {
    await Promise.all(children.map((c) => new Promise<void>((resolve) => {
      if (c.exitCode !== null || c.signalCode !== null) return resolve();
      const hard = setTimeout(() => c.kill('SIGKILL'), 5_000);
      c.once('exit', () => { clearTimeout(hard); resolve(); });
      c.kill('SIGTERM');
    })));
  };
  try {
    const path = process.env.PATH ?? '/usr/bin:/bin';
    const dns = startChild('pebble-challtestsrv', [
      '-dns01', `127.0.0.1:${dnsPort}`, '-management', `127.0.0.1:${dnsMgmtPort}`,
      '-http01', '', '-https01', '', '-tlsalpn01', '', '-defaultIPv4', '', '-defaultIPv6', '',
    ], { PATH: path }, '[dns]');
    const pebble = startChild('pebble', ['-config', configPath, '-dnsserver', `127.0.0.1:${dnsPort}`], {
      // No authorization reused (Pebble reuses half by default): every order answers its
      // challenges, so a test can say which challenge an order was answered by.
      PATH: path, PEBBLE_VA_NOSLEEP: '1', PEBBLE_AUTHZREUSE: '0',
    }, '[pebble]');
    const exited = Promise.race([dns, pebble].map((c) => new Promise<never>((_, reject) => {
      c.once('exit', (code) => reject(/address already in use/.test(out)
        ? new PortTaken(out)
        : new Error(`${c.spawnfile} exited with ${code} before it was ready:\n${out}`)));
      c.once('error', (err) => reject(new Error(`${c.spawnfile} could not start: ${err.message}`)));
    })));
    exited.catch(() => undefined);
    const directory = `https://127.0.0.1:${acmePort}/dir`;
    const addNames = async (names: readonly string[]): Promise<void> => {
      for (const host of names) await dnsManagement(dnsMgmtPort, '/add-a', { host, addresses: ['127.0.0.1'] });
    };
    await Promise.race([exited, (async () => {
      await poll(() => dnsManagement(dnsMgmtPort, '/clear-a', { host: 'readiness.invalid' }), 'pebble-challtestsrv management');
      await addNames(opts.names ?? []);
      await poll(() => get(directory, rootCa).then(() => undefined), 'the Pebble directory');
    })()]);
    return {
      directory,
      rootCa,
      issuerRoots: () => get(`https://127.0.0.1:${mgmtPort}/roots/0`, rootCa),
      addNames,
      output: () => out,
      async stop() {
        await stop();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** A CA, and a certificate it signs for 127.0.0.1 and localhost: Pebble's HTTPS identity. */
async function makeCertificates(dir: string): Promise<string> {
  const at = (f: string) => join(dir, f);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  await run('openssl', ['req', '-x509', ...ec, '-keyout', at('ca.key'), '-out', at('ca.pem'), '-days', '2', '-subj', '/CN=Meerkat test ACME server root',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  await run('openssl', ['req', ...ec, '-keyout', at('pebble.key'), '-out', at('pebble.csr'), '-subj', '/CN=localhost']);
  await writeFile(at('ext.cnf'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=critical,CA:FALSE\nextendedKeyUsage=serverAuth\n');
  await run('openssl', ['x509', '-req', '-in', at('pebble.csr'), '-CA', at('ca.pem'), '-CAkey', at('ca.key'), '-CAcreateserial',
    '-out', at('pebble.pem'), '-days', '2', '-extfile', at('ext.cnf')]);
  return readFile(at('ca.pem'), 'utf8');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function poll(attempt: () => Promise<void>, what: string): Promise<void> {
  const end = Date.now() + READY_MS;
  for (let delay = 20; ; delay = Math.min(delay * 2, 250)) {
    try {
      return await attempt();
    } catch (err) {
      if (Date.now() > end) throw new Error(`${what} did not answer within ${READY_MS} ms: ${(err as Error).message}`);
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

function get(url: string, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { ca, agent: false, timeout: 5_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => { body += d; }).on('end', () => {
        if (res.statusCode === 200) resolve(body);
        else reject(new Error(`GET ${url}: ${res.statusCode}`));
      });
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url}: timed out`)));
    req.on('error', reject).end();
  });
}

function dnsManagement(port: number, path: string, body: unknown): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: 'POST', agent: false, timeout: 5_000 }, (res) => {
      res.resume().on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`POST ${path}: ${res.statusCode}`))));
    });
    req.on('timeout', () => req.destroy(new Error(`POST ${path}: timed out`)));
    req.on('error', reject).end(JSON.stringify(body));
  });
}
