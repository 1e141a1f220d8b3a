/**
 * Signing request: the gateway makes the key and the CSR; the pending row serves nothing until
 * the authority's answer is adopted, and only an answer for this key is (spec 1.2 rule 2).
 */
import { makeSigningRequest } from '../../../core/tls/csr.ts';
import { GatewayError, invalidField } from '../../../http/errors.ts';
import { obtain, type Obtained } from './obtained.ts';

export interface Pending {
  readonly names: readonly string[];
  readonly csrPem: string;
  readonly keyPem: string;
}

export async function requestSigning(names: unknown, subject: unknown): Promise<Pending> {
  if (!Array.isArray(names) || names.length === 0 || !names.every((n) => typeof n === 'string')) {
    throw invalidField('names', 'names is a list of the host names or IP addresses the certificate is asked for.');
  }
  if (subject !== undefined && (typeof subject !== 'object' || subject === null || Array.isArray(subject))) {
    throw invalidField('subject', 'subject is an object such as {"organisation": "Example Ltd", "country": "FR"}.');
  }
  const made = await makeSigningRequest({ names: names as string[], ...(subject ? { subject: subject as Record<string, string> } : {}) });
  // The names as the request carries them: lower case, addresses normalised, each once.
  return { names: made.names, csrPem: made.csr, keyPem: made.key };
}

/** The authority's answer, adopted only when it is a certificate for the pending key. */
export function adoptAnswer(cert: unknown, keyPem: string): Obtained {
  if (typeof cert !== 'string' || cert.trim() === '') throw invalidField('cert', 'cert is the certificate the authority issued, in PEM.');
  try {
    return obtain(cert, keyPem, { cert: 'cert', key: 'cert' });
  } catch (err) {
    if (err instanceof GatewayError && err.code === 'tls.key-mismatch') {
      throw new GatewayError('tls.answer-mismatch', 'This certificate was not issued for the key of this signing request: send the answer to this request, not another one.', 'cert');
    }
    throw err;
  }
}
