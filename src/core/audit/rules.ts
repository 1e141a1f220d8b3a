/**
 * Endpoint audit rules (spec 1.3 rules 12 and 13, CONTRACT.md "Audit"): per operation of a
 * route's OpenAPI contract, a switch and what to keep of each call. This file reads and checks
 * the rules; operations.ts compiles them for the data plane and shapes the line.
 *
 * ```json
 * { "operations": { "POST /orders/{id}": { "on": true, "description": "Order changed",
 *     "fields": { "order": "path:id", "customer": "body:/customer/id" },
 *     "body": true, "secretFields": ["iban"] } } }
 * ```
 */
import { GatewayError, invalidField } from '../../http/errors.ts';
import { isHeaderName } from '../../http/grammar.ts';

export interface OperationRule {
  readonly on: boolean;
  readonly description?: string;
  /** `audit.field.<name>` → `path:<var>`, `query:<name>`, `header:<name>` or `body:<JSON pointer>`. */
  readonly fields?: Readonly<Record<string, string>>;
  /** Keep the JSON body (masked, 64 KB at most). */
  readonly body?: boolean;
  /** Names replaced by `***` in the body and in fields, besides the default secret names. */
  readonly secretFields?: readonly string[];
}

/** The rules of one route, and the JSON file the route editor uploads (`GET …/audit`). */
export interface RouteAudit {
  readonly operations: Readonly<Record<string, OperationRule>>;
}

export const FIELDS_MAX = 20;
export const SECRET_FIELDS_MAX = 50;
export const DESCRIPTION_MAX = 500;
/** As many as endpoint rules a route may hold. */
export const OPERATIONS_MAX = 500;
const FIELD_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
/** The operations an OpenAPI path item may hold (its keys, lower-case). */
export const OPENAPI_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
const KEY = /^([A-Za-z]+) (\/\S*)$/;

export type FieldSource =
  | { readonly kind: 'path'; readonly name: string }
  | { readonly kind: 'query'; readonly name: string }
  | { readonly kind: 'header'; readonly name: string }
  | { readonly kind: 'body'; readonly pointer: readonly string[] };

/** The variables of an OpenAPI path template, in order: `/a/{x}/{y}.json` → x, y. */
export function templateVariables(template: string): string[] {
  return [...template.matchAll(/\{([^{}/]+)\}/g)].map((m) => m[1]!);
}

/** RFC 6901 tokens of a pointer, or undefined when it is not one. */
export function parsePointer(pointer: string): string[] | undefined {
  if (pointer === '') return [];
  if (!pointer.startsWith('/') || /~(?![01])/.test(pointer)) return undefined;
  return pointer.slice(1).split('/').map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** What a field's text names, or a sentence saying why it names nothing. */
export function parseFieldSource(text: string, variables: readonly string[]): FieldSource | string {
  const colon = text.indexOf(':');
  const kind = colon < 0 ? '' : text.slice(0, colon);
  const rest = colon < 0 ? '' : text.slice(colon + 1);
  switch (kind) {
    case 'path':
      if (!variables.includes(rest)) {
        return variables.length === 0
          ? `"${text}" names a path variable, and this operation's template has none`
          : `"${text}" names no variable of the template; it has ${variables.map((v) => `{${v}}`).join(', ')}`;
      }
      return { kind: 'path', name: rest };
    case 'query':
      if (rest === '' || rest.length > 200) return `"${text}" must name a query parameter (1 to 200 characters)`;
      return { kind: 'query', name: rest };
    case 'header':
      if (!isHeaderName(rest)) return `"${text}" must name a header (a token of at most 100 characters)`;
      return { kind: 'header', name: rest.toLowerCase() };
    case 'body': {
      const pointer = parsePointer(rest);
      if (pointer === undefined) return `"${text}" must hold a JSON pointer such as body:/customer/id ("" for the whole body, "~0" for "~", "~1" for "/")`;
      return { kind: 'body', pointer };
    }
    default:
      return `"${text}" must be path:<variable>, query:<name>, header:<name> or body:<JSON pointer>`;
  }
}

/** `{paths}` of a contract when it has one, else undefined. */
export function pathsOf(openapi: unknown): Record<string, unknown> | undefined {
  if (typeof openapi !== 'object' || openapi === null) return undefined;
  const paths = (openapi as Record<string, unknown>).paths;
  return typeof paths === 'object' && paths !== null && !Array.isArray(paths) ? paths as Record<string, unknown> : undefined;
}

/** The operation object of `<METHOD> <template>` in the contract, or undefined. */
export function contractOperation(openapi: unknown, method: string, template: string): Record<string, unknown> | undefined {
  const paths = pathsOf(openapi);
  if (!paths || !Object.hasOwn(paths, template)) return undefined;
  const item = paths[template];
  if (typeof item !== 'object' || item === null) return undefined;
  const lower = method.toLowerCase();
  if (!Object.hasOwn(item, lower)) return undefined;
  const op = (item as Record<string, unknown>)[lower];
  return typeof op === 'object' && op !== null && !Array.isArray(op) ? op as Record<string, unknown> : undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `where` is the field path of the object ('' at the top); `what` names it in the sentence. */
function onlyKeys(value: Record<string, unknown>, allowed: readonly string[], where: string, what = where): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) {
      throw invalidField(where === '' ? key : `${where}.${key}`, `"${key}" is not a field of ${what}; the fields are ${allowed.join(', ')}.`);
    }
  }
}

function parseRule(value: unknown, template: string, where: string): OperationRule {
  if (!isObject(value)) throw invalidField(where, `${where} must be an object such as {"on": true}.`);
  onlyKeys(value, ['on', 'description', 'fields', 'body', 'secretFields'], where);
  if (typeof value.on !== 'boolean') throw invalidField(`${where}.on`, `${where}.on is required: true audits the operation, false keeps the rule switched off.`);
  const rule: { -readonly [K in keyof OperationRule]: OperationRule[K] } = { on: value.on };
  if (value.description !== undefined && value.description !== null) {
    if (typeof value.description !== 'string' || value.description.trim() === '' || value.description.length > DESCRIPTION_MAX) {
      throw invalidField(`${where}.description`, `${where}.description must be a non-empty text of at most ${DESCRIPTION_MAX} characters.`);
    }
    rule.description = value.description;
  }
  if (value.fields !== undefined && value.fields !== null) {
    if (!isObject(value.fields)) throw invalidField(`${where}.fields`, `${where}.fields must map names to sources, such as {"order": "path:id"}.`);
    const entries = Object.entries(value.fields);
    if (entries.length > FIELDS_MAX) throw invalidField(`${where}.fields`, `${where}.fields may name at most ${FIELDS_MAX} fields.`);
    const variables = templateVariables(template);
    const fields: Record<string, string> = {};
    for (const [name, text] of entries) {
      const at = `${where}.fields.${name}`;
      if (!FIELD_NAME.test(name)) throw invalidField(at, `${at}: a field name is 1 to 64 letters, digits, "_", "." or "-".`);
      if (typeof text !== 'string') throw invalidField(at, `${at} must be text such as "path:id", "query:page", "header:x-request-id" or "body:/customer/id".`);
      const source = parseFieldSource(text, variables);
      if (typeof source === 'string') throw invalidField(at, `${at}: ${source}.`);
      Object.defineProperty(fields, name, { value: text, enumerable: true, writable: true, configurable: true });
    }
    if (entries.length > 0) rule.fields = fields;
  }
  if (value.body !== undefined && value.body !== null) {
    if (typeof value.body !== 'boolean') throw invalidField(`${where}.body`, `${where}.body must be true or false.`);
    if (value.body) rule.body = true;
  }
  if (value.secretFields !== undefined && value.secretFields !== null) {
    const list = value.secretFields;
    if (!Array.isArray(list) || list.some((s) => typeof s !== 'string' || s === '' || s.length > 100)) {
      throw invalidField(`${where}.secretFields`, `${where}.secretFields must be a list of field names (1 to 100 characters each).`);
    }
    if (list.length > SECRET_FIELDS_MAX) throw invalidField(`${where}.secretFields`, `${where}.secretFields may name at most ${SECRET_FIELDS_MAX} fields.`);
    if (list.length > 0) rule.secretFields = [...new Set(list as string[])];
  }
  return rule;
}

/** Splits `"post /orders/{id}"` into `POST` and the template, or undefined. */
export function operationKey(key: string): { method: string; template: string } | undefined {
  const m = KEY.exec(key);
  if (!m) return undefined;
  const method = m[1]!.toUpperCase();
  if (!(OPENAPI_METHODS as readonly string[]).includes(method.toLowerCase())) return undefined;
  return { method, template: m[2]! };
}

/** True for `{"operations": {}}`: the one write every edition accepts (it removes the rules). */
export function isRemoval(body: unknown): boolean {
  return isObject(body) && Object.keys(body).length === 1 && isObject(body.operations) && Object.keys(body.operations).length === 0;
}

/**
 * Reads `PUT /api/routes/{id}/audit` (and a route's `audit` in the declarative file) against the
 * route's contract. Keys are normalised to `<METHOD> <template>` with the method upper-case.
 * Refusals: 400 `field.invalid` for the shape (the field names the place), 409
 * `audit.no-contract` for a route without contract, 409 `audit.operation-unknown` for an
 * operation the contract does not have. `{"operations": {}}` is always accepted.
 */
export function parseRouteAudit(body: unknown, openapi: unknown): RouteAudit {
  if (!isObject(body)) throw invalidField('body', 'Send the audit rules as a JSON object: {"operations": {"<METHOD> <template>": {"on": true}}}.');
  onlyKeys(body, ['operations'], '', 'the audit rules');
  if (!isObject(body.operations)) throw invalidField('operations', 'operations must map "<METHOD> <template>" to a rule, such as {"POST /orders": {"on": true}}.');
  const entries = Object.entries(body.operations);
  if (entries.length === 0) return { operations: {} };
  if (entries.length > OPERATIONS_MAX) throw invalidField('operations', `operations may name at most ${OPERATIONS_MAX} operations.`);
  if (typeof openapi !== 'object' || openapi === null) {
    throw new GatewayError('audit.no-contract', 'This route has no OpenAPI contract, so its operations cannot be audited; deposit the contract (the route\'s openapi field) first.', 'operations');
  }
  const operations: Record<string, OperationRule> = {};
  for (const [key, value] of entries) {
    const where = `operations.${key}`;
    const op = operationKey(key);
    if (!op) throw invalidField(where, `"${key}" must be "<METHOD> <template>", such as "POST /orders/{id}", the method one of ${OPENAPI_METHODS.map((m) => m.toUpperCase()).join(', ')}.`);
    const normal = `${op.method} ${op.template}`;
    if (Object.hasOwn(operations, normal)) throw invalidField(where, `"${key}" names ${normal} a second time.`);
    if (contractOperation(openapi, op.method, op.template) === undefined) {
      throw new GatewayError('audit.operation-unknown', `${normal} is not an operation of this route's OpenAPI contract (no "${op.method.toLowerCase()}" under paths["${op.template}"]).`, where);
    }
    Object.defineProperty(operations, normal, { value: parseRule(value, op.template, where), enumerable: true, writable: true, configurable: true });
  }
  return { operations };
}

/**
 * The refusal for a route write whose contract no longer holds what its kept rules name, or
 * undefined when they still fit. The rules are never dropped silently: an audit that stops
 * without anyone asking is worse than a deployment that must say so.
 */
export function contractConflict(openapi: unknown, rules: RouteAudit | null | undefined, routeId: string): GatewayError | undefined {
  const keys = Object.keys(rules?.operations ?? {});
  if (keys.length === 0) return undefined;
  const fix = `remove ${keys.length === 1 ? 'that rule' : 'those rules'} first (PUT /api/routes/${routeId}/audit)`;
  if (typeof openapi !== 'object' || openapi === null) {
    return new GatewayError('audit.no-contract', `The route "${routeId}" has endpoint audit rules (${keys.join(', ')}), which need its OpenAPI contract; keep the contract, or ${fix}.`, 'openapi');
  }
  const missing = keys.sort().filter((k) => {
    const op = operationKey(k);
    return op === undefined || contractOperation(openapi, op.method, op.template) === undefined;
  });
  if (missing.length === 0) return undefined;
  return new GatewayError('audit.operation-unknown', `The new OpenAPI contract of the route "${routeId}" no longer has ${missing.join(', ')}, which its endpoint audit names; keep ${missing.length === 1 ? 'that operation' : 'those operations'} in the contract, or ${fix}.`, 'openapi');
}

/**
 * The rules with their operations in one order (by template, then method): PostgreSQL's jsonb
 * keeps keys in an order of its own, and an exported file should read the same from any store.
 */
export function sortedAudit(rules: RouteAudit): RouteAudit {
  const keyed = Object.entries(rules.operations).map(([key, rule]) => ({ key, rule, op: operationKey(key) }));
  keyed.sort((a, b) => compare(a.op?.template ?? a.key, b.op?.template ?? b.key) || compare(a.op?.method ?? '', b.op?.method ?? ''));
  const operations: Record<string, OperationRule> = {};
  for (const { key, rule } of keyed) Object.defineProperty(operations, key, { value: rule, enumerable: true, writable: true, configurable: true });
  return { operations };
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The part of the contract the data plane needs, so the snapshot does not carry whole
 * documents: for each operation the rules name, its summary.
 */
export function contractExcerpt(openapi: unknown, rules: RouteAudit): { paths: Record<string, Record<string, { summary?: string }>> } {
  const paths: Record<string, Record<string, { summary?: string }>> = {};
  for (const key of Object.keys(rules.operations)) {
    const op = operationKey(key);
    if (!op) continue;
    const found = contractOperation(openapi, op.method, op.template);
    if (!found) continue;
    const item = Object.hasOwn(paths, op.template) ? paths[op.template]! : {};
    Object.defineProperty(paths, op.template, { value: item, enumerable: true, writable: true, configurable: true });
    item[op.method.toLowerCase()] = typeof found.summary === 'string' ? { summary: found.summary } : {};
  }
  return { paths };
}
