import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Certificate material made by the openssl command line in a temporary folder, so tests read
 * what other tools write (EC keys, legacy key formats, chains, encrypted keys) and not only our own.
 */
export interface OpenSslKit {
  /** Runs openssl in the folder; returns its standard output. */
  run(...args: string[]): string;
  read(file: string): string;
  write(file: string, text: string): void;
  /** A CA (P-256, CA:true) as ca.pem + ca-key.pem. */
  authority(name?: string): { cert: string; key: string };
  /** A leaf signed by the CA made by authority(), with the SAN given ("DNS:a.example.com,IP:10.0.0.1"). */
  leaf(file: string, san: string, options?: { cn?: string; days?: number; keyType?: 'ec' | 'rsa' }): { cert: string; key: string };
  remove(): void;
}

export function openSslKit(): OpenSslKit {
  const dir = mkdtempSync(join(tmpdir(), 'meerkat-tls-'));
  const run = (...args: string[]): string => execFileSync('openssl', args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const read = (file: string): string => readFileSync(join(dir, file), 'utf8');
  const write = (file: string, text: string): void => writeFileSync(join(dir, file), text);
  const newKey = (file: string, keyType: 'ec' | 'rsa'): void => {
    if (keyType === 'ec') run('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', file);
    else run('genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', file);
  };
  return {
    run, read, write,
    authority(name = 'Meerkat Test Root') {
      newKey('ca-key.pem', 'ec');
      run('req', '-x509', '-new', '-key', 'ca-key.pem', '-out', 'ca.pem', '-days', '30', '-subj', `/O=Meerkat Tests/CN=${name}`,
        '-addext', 'basicConstraints=critical,CA:true', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
      return { cert: read('ca.pem'), key: read('ca-key.pem') };
    },
    leaf(file, san, options = {}) {
      newKey(`${file}-key.pem`, options.keyType ?? 'ec');
      run('req', '-new', '-key', `${file}-key.pem`, '-out', `${file}.csr`, '-subj', `/CN=${options.cn ?? file}`);
      const ext = san === '' ? 'basicConstraints=CA:false\n' : `basicConstraints=CA:false\nsubjectAltName=${san}\n`;
      write(`${file}.ext`, ext);
      run('x509', '-req', '-in', `${file}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca-key.pem', '-CAcreateserial',
        '-out', `${file}.pem`, '-days', String(options.days ?? 10), '-extfile', `${file}.ext`);
      return { cert: read(`${file}.pem`), key: read(`${file}-key.pem`) };
    },
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
