import { nameProblem, objectBody, stringList } from '../validate.ts';

export interface RoleInput {
  readonly name: string;
  readonly implies: string[];
}

export function parseRole(name: string, value: unknown): RoleInput {
  const body = objectBody(value ?? {}, ['implies'], 'a role');
  return {
    name,
    implies: body.implies === undefined || body.implies === null ? [] : stringList(body.implies, 'implies', { max: 100, item: nameProblem }),
  };
}
