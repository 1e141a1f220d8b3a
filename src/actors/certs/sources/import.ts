/** Import: a certificate (a chain allowed) and its key, as PEM (spec 1.2 rule 2). */
import { invalidField } from '../../../http/errors.ts';
import { obtain, type Obtained } from './obtained.ts';

export function fromImport(cert: unknown, key: unknown): Obtained {
  if (typeof cert !== 'string' || cert.trim() === '') throw invalidField('cert', 'cert is the certificate in PEM (BEGIN CERTIFICATE), its chain after it if any.');
  if (typeof key !== 'string' || key.trim() === '') throw invalidField('key', 'key is the private key in PEM (BEGIN PRIVATE KEY), without a passphrase.');
  return obtain(cert, key, { cert: 'cert', key: 'key' });
}
