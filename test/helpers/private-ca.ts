/**
 * A private certificate authority made with the openssl command line in a temporary directory:
 * an authority (EC P-256, CA:TRUE) and leaf certificates it signs for the names a test asks.
 * Nothing is mocked: the gateway reads these as it would an operator's.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Pem {
  readonly cert: string;
  readonly key: string;
}

export interface PrivateCa extends Pem {
  /** A leaf for `names` (DNS names, or IP addresses), valid `days` days, signed by this authority. */
  leaf(names: readonly string[], days?: number): Pem;
  /** Removes the directory. */
  remove(): void;
}

const CURVE = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

function openssl(dir: string, args: readonly string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

export function makeCa(commonName = 'Meerkat Test Authority', days = 30): PrivateCa {
  const dir = mkdtempSync(join(tmpdir(), 'meerkat-ca-'));
  openssl(dir, [
    'req', '-x509', ...CURVE, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', String(days), '-subj', `/CN=${commonName}`,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  let serial = 0;
  return {
    cert: readFileSync(join(dir, 'ca.pem'), 'utf8'),
    key: readFileSync(join(dir, 'ca.key'), 'utf8'),
    leaf(names, leafDays = 10) {
      const n = ++serial;
      const san = names.map((x) => (/^[\d.]+$|:/.test(x) ? `IP:${x}` : `DNS:${x}`)).join(',');
      writeFileSync(join(dir, `leaf${n}.ext`), `subjectAltName=${san}\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n`);
      openssl(dir, ['req', ...CURVE, '-keyout', `leaf${n}.key`, '-out', `leaf${n}.csr`, '-subj', `/CN=${names[0] ?? 'leaf'}`]);
      openssl(dir, [
        'x509', '-req', '-in', `leaf${n}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-set_serial', String(1000 + n),
        '-out', `leaf${n}.pem`, '-days', String(leafDays), '-extfile', `leaf${n}.ext`,
      ]);
      return { cert: readFileSync(join(dir, `leaf${n}.pem`), 'utf8'), key: readFileSync(join(dir, `leaf${n}.key`), 'utf8') };
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
