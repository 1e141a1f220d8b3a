import { invalidField } from '../../http/errors.ts';
import { nameProblem, objectBody, optionalBoolean, optionalString, requiredString, stringList, type Fields } from '../validate.ts';

export const CAPABILITIES = ['root', 'infra-admin', 'app-admin', 'gateway-admin', 'org-admin'] as const;
export const MIN_PASSWORD = 12;
const ACCOUNT_NAME = /^[A-Za-z0-9][A-Za-z0-9._@+-]{0,199}$/;
const ACCOUNT_HINT = '1 to 200 letters, digits, ".", "_", "@", "+" or "-", starting with a letter or digit';
/** The user of every scheduled call (spec 1.4: the access log's `user`, the identity headers). */
export const SCHEDULER_USER = 'scheduler';

/** What a write sets; undefined leaves a field as it is (on update). */
export interface AccountInput {
  readonly name?: string;
  readonly password?: string;
  readonly roles?: string[];
  readonly capabilities?: string[];
  /** null clears it. */
  readonly organisation?: string | null;
  readonly disabled?: boolean;
}

function password(body: Fields, required: boolean): string | undefined {
  const v = body.password;
  if (v === undefined && !required) return undefined;
  if (typeof v !== 'string' || v.length < MIN_PASSWORD || v.length > 1024) {
    throw invalidField('password', `password must be from ${MIN_PASSWORD} to 1024 characters.`);
  }
  return v;
}

/** The owner's change of password: the current one, and the new one under the same rule. */
export function parsePasswordChange(value: unknown): { current: string; password: string } {
  const body = objectBody(value, ['current', 'password'], 'a password change');
  if (typeof body.current !== 'string' || body.current === '' || body.current.length > 1024) {
    throw invalidField('current', 'current is the password in use now.');
  }
  return { current: body.current, password: password(body, true)! };
}

function common(body: Fields): AccountInput {
  return {
    ...(body.roles !== undefined ? { roles: stringList(body.roles, 'roles', { max: 100, item: nameProblem }) } : {}),
    ...(body.capabilities !== undefined
      ? { capabilities: stringList(body.capabilities, 'capabilities', { max: CAPABILITIES.length, item: (c) => ((CAPABILITIES as readonly string[]).includes(c) ? undefined : `is not a capability; they are ${CAPABILITIES.join(', ')}`) }) }
      : {}),
    ...(body.organisation !== undefined ? { organisation: optionalString(body, 'organisation', { max: 100 }) ?? null } : {}),
    ...(body.disabled !== undefined ? { disabled: optionalBoolean(body, 'disabled', false) } : {}),
  };
}

/**
 * A name no scheduled call can be taken for: `scheduler` (any case) is the identity the gateway
 * poses for every scheduled call, and an account of that name would read the same to a service
 * and in the access log.
 */
function accountName(body: Fields): string {
  const name = requiredString(body, 'name', { max: 200, pattern: ACCOUNT_NAME, hint: ACCOUNT_HINT });
  if (name.toLowerCase() === SCHEDULER_USER) {
    throw invalidField('name', `"${name}" is the identity of the gateway's scheduled calls; give the account another name.`);
  }
  return name;
}

export function parseNewAccount(value: unknown): AccountInput & { name: string; password: string } {
  const body = objectBody(value, ['name', 'password', 'roles', 'capabilities', 'organisation', 'disabled'], 'an account');
  return {
    roles: [], capabilities: [], organisation: null, disabled: false,
    ...common(body),
    name: accountName(body),
    password: password(body, true)!,
  };
}

export function parseAccountUpdate(value: unknown): AccountInput {
  const body = objectBody(value, ['password', 'roles', 'capabilities', 'organisation', 'disabled'], 'an account change');
  const pw = password(body, false);
  return { ...common(body), ...(pw !== undefined ? { password: pw } : {}) };
}
