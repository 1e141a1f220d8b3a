import { invalidField } from '../../http/errors.ts';
import { isFieldValue } from '../../http/grammar.ts';
import { objectBody } from '../validate.ts';

/** A vault name is what a header writes as `${name}` or `$name`. */
export const VAULT_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
export const MAX_VAULT_VALUE = 64 * 1024;

export function vaultName(name: string): string {
  if (!VAULT_NAME.test(name)) {
    throw invalidField('name', 'A vault name is 1 to 128 letters, digits or "_", not starting with a digit (it is written ${name} or $name in a header).');
  }
  return name;
}

export function parseVaultValue(value: unknown): string {
  const body = objectBody(value, ['value'], 'a vault value');
  const v = body.value;
  if (typeof v !== 'string' || v === '' || Buffer.byteLength(v) > MAX_VAULT_VALUE) {
    throw invalidField('value', `value must be a non-empty string of at most ${MAX_VAULT_VALUE} bytes.`);
  }
  // A value goes out in a header (`${name}`): one a header cannot carry would fail every call that
  // names it, so it is refused where it is written as well as where it is used.
  if (!isFieldValue(v)) {
    throw invalidField('value', 'value goes out in a header: it must be one line of text without control characters (a tab is allowed), Latin-1 at most.');
  }
  return v;
}

export function vaultScope(organisation: string | null): string {
  return organisation === null ? 'app' : `org:${organisation}`;
}
