import { GatewayError, invalidField } from '../../http/errors.ts';
import { nameProblem, objectBody, optionalString, requiredString, stringList } from '../validate.ts';
import { TOKEN_KINDS, type TokenKind } from './kinds.ts';

export interface TokenInput {
  readonly name: string;
  readonly kind: TokenKind;
  /** Account id or name: required for personal, defaults to the caller for admin, none for schedules. */
  readonly account: string | undefined;
  readonly routes: string[] | null;
  readonly roles: string[] | null;
  /** The organisations a schedules token's schedules may act for (ids or `*`); none when not given. */
  readonly organisations: string[] | null;
}

export function parseToken(value: unknown): TokenInput {
  const body = objectBody(value, ['name', 'kind', 'account', 'routes', 'roles', 'organisations'], 'a token');
  const name = requiredString(body, 'name', { max: 200 });
  const kind = body.kind;
  if (typeof kind !== 'string' || !(TOKEN_KINDS as readonly string[]).includes(kind)) {
    throw invalidField('kind', `kind must be one of ${TOKEN_KINDS.join(', ')}.`);
  }
  const account = optionalString(body, 'account', { max: 200 });
  if (kind !== 'schedules') {
    const perimeter = (['routes', 'roles', 'organisations'] as const).find((f) => body[f] !== undefined);
    if (perimeter !== undefined) {
      throw invalidField(perimeter, 'routes, roles and organisations are the perimeter of a schedules token; an admin or personal token acts with its account\'s rights.');
    }
    if (kind === 'personal' && account === undefined) throw new GatewayError('account.unknown', 'A personal token carries an account\'s identity: name the account.', 'account');
    return { name, kind: kind as TokenKind, account, routes: null, roles: null, organisations: null };
  }
  if (account !== undefined) throw invalidField('account', 'A schedules token belongs to no account; its perimeter is routes, roles and organisations.');
  return {
    name,
    kind: 'schedules',
    account: undefined,
    routes: body.routes === undefined ? ['*'] : stringList(body.routes, 'routes', { max: 500, min: 1, item: (r) => (r === '*' ? undefined : nameProblem(r)) }),
    roles: body.roles === undefined ? [] : stringList(body.roles, 'roles', { max: 100, item: nameProblem }),
    organisations: body.organisations === undefined ? [] : stringList(body.organisations, 'organisations', { max: 500, item: (o) => (o === '*' ? undefined : nameProblem(o)) }),
  };
}
