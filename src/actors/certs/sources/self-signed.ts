/** Self-signed: the gateway makes key and certificate for the names asked (spec 1.2 rule 2). */
import { selfSigned } from '../../../core/tls/self-signed.ts';
import { invalidField } from '../../../http/errors.ts';
import { obtain, type Obtained } from './obtained.ts';

export function fromSelfSigned(names: unknown, days: unknown, now: number): Obtained {
  if (!Array.isArray(names) || names.length === 0 || !names.every((n) => typeof n === 'string')) {
    throw invalidField('names', 'names is a list of the host names, wildcards (*.example.com) or IP addresses the certificate carries.');
  }
  if (days !== undefined && (typeof days !== 'number' || !Number.isInteger(days) || days < 1 || days > 3650)) {
    throw invalidField('days', 'days is a whole number from 1 to 3650.');
  }
  const made = selfSigned({ names: names as string[], ...(days !== undefined ? { days: days as number } : {}), now });
  return obtain(made.cert, made.key, { cert: 'names', key: 'names' });
}
