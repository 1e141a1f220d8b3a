// tls.mjs - the test certificates of an HTTPS bench, made with the openssl command line at every run.
//
// A throwaway certificate authority (ECDSA P-256) signs one leaf per key type for the same names, so every
// server under test presents the very same files and a readiness check can verify them (bench/lib/http.mjs).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { die } from './procs.mjs';

/** The key types a leaf can have: openssl `req -newkey` arguments, and how the report names them. */
export const KEY_TYPES = {
  ecdsa: { newkey: ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'], label: 'ECDSA P-256' },
  rsa: { newkey: ['-newkey', 'rsa:2048'], label: 'RSA 2048' },
};

function openssl(args, cwd) {
  const r = spawnSync('openssl', args, { cwd, encoding: 'utf8', timeout: 30_000 });
  if (r.error) die(`openssl ${args[0]}: ${r.error.message} (apt-get install -y openssl)`);
  if (r.status !== 0) die(`openssl ${args.join(' ')} failed:\n${r.stderr.slice(-1500)}`);
  return r.stdout;
}

/**
 * Makes dir/ca.crt and, per key type in `types`, dir/<type>.crt + dir/<type>.key (PKCS#8, no passphrase):
 * leaves for `dns` and `ips`, valid `days` days, serverAuth. Returns { ca, caFile, leaves: { type: { certFile,
 * keyFile, cert, key, label } } }.
 */
export function makeCertificates(dir, { dns, ips = [], types = Object.keys(KEY_TYPES), days = 30 }) {
  fs.mkdirSync(dir, { recursive: true });
  openssl(['req', '-x509', '-new', ...KEY_TYPES.ecdsa.newkey, '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', String(days),
    '-subj', '/CN=Meerkat bench CA', '-addext', 'basicConstraints=critical,CA:true', '-addext', 'keyUsage=critical,keyCertSign'], dir);
  const san = [...dns.map((d) => `DNS:${d}`), ...ips.map((ip) => `IP:${ip}`)].join(',');
  fs.writeFileSync(path.join(dir, 'leaf.ext'), `subjectAltName=${san}\nbasicConstraints=critical,CA:false\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n`);
  const leaves = {};
  for (const type of types) {
    const kt = KEY_TYPES[type];
    if (!kt) die(`unknown key type "${type}" (known: ${Object.keys(KEY_TYPES).join(', ')})`);
    openssl(['req', '-new', ...kt.newkey, '-nodes', '-keyout', `${type}.key`, '-out', `${type}.csr`, '-subj', `/CN=${dns[0]}`], dir);
    openssl(['x509', '-req', '-in', `${type}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', String(days),
      '-extfile', 'leaf.ext', '-out', `${type}.crt`], dir);
    const certFile = path.join(dir, `${type}.crt`), keyFile = path.join(dir, `${type}.key`);
    leaves[type] = { certFile, keyFile, cert: fs.readFileSync(certFile, 'utf8'), key: fs.readFileSync(keyFile, 'utf8'), label: kt.label };
  }
  fs.rmSync(path.join(dir, 'ca.key')); // nothing more is signed
  const caFile = path.join(dir, 'ca.crt');
  return { ca: fs.readFileSync(caFile, 'utf8'), caFile, leaves };
}
