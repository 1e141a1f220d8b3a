/**
 * Endpoint audit on the data plane (spec 1.3 rule 12, 2.6): the rules of a route compiled into
 * an index that finds the audited operation of a call, and the audit line of that call. Pure:
 * the data plane hands what it saw (request record), this shapes what the trail keeps.
 */
import type { AuditEntry } from '../../store/audit.ts';
import { TemplateIndex } from '../routes/template-index.ts';
import { clip } from './event.ts';
import { BODY_MAX_BYTES, bodySecretTest, MASK, maskBody } from './mask.ts';
import {
  contractOperation, DESCRIPTION_MAX, operationKey, parseFieldSource, templateVariables,
  type FieldSource, type OperationRule, type RouteAudit,
} from './rules.ts';

export interface AuditedOperation {
  /** `<METHOD> <template>`: the key of the rule and the target's name. */
  readonly key: string;
  readonly method: string;
  readonly template: string;
  /** The rule's description, else the contract's summary, else the key. */
  readonly description: string;
  readonly rule: OperationRule;
  readonly fields: ReadonlyArray<{ readonly name: string; readonly source: FieldSource }>;
  /** The call's body is needed: kept (`body: true`) or read by a `body:` field. */
  readonly wantsBody: boolean;
}

export interface OperationMatch {
  readonly operation: AuditedOperation;
  /** Path variables, percent-decoded per segment. */
  readonly variables: Readonly<Record<string, string>>;
}

/** The audited operations of one route, by method; a match tests each template once at most. */
export class OperationAuditIndex {
  readonly #index: TemplateIndex<AuditedOperation>;
  readonly size: number;

  constructor(operations: readonly AuditedOperation[]) {
    this.#index = new TemplateIndex(operations);
    this.size = operations.length;
  }

  /** The audited operation of `method` (upper-case) on `servicePath` (as forwarded, percent-encoded). */
  match(method: string, servicePath: string): OperationMatch | undefined {
    const m = this.#index.match(method, servicePath);
    return m === undefined ? undefined : { operation: m.value, variables: m.variables };
  }
}

/**
 * Compiles a route's rules against its contract (the whole document or `contractExcerpt`).
 * Only operations switched on are kept; undefined when none is. Never throws: what no longer
 * parses (rules are checked when written) is left out.
 */
export function compileOperationAudit(openapi: unknown, rules: RouteAudit | null | undefined): OperationAuditIndex | undefined {
  const compiled: AuditedOperation[] = [];
  for (const [key, rule] of Object.entries(rules?.operations ?? {})) {
    if (rule?.on !== true) continue;
    const op = operationKey(key);
    if (!op) continue;
    const summary = contractOperation(openapi, op.method, op.template)?.summary;
    const variables = templateVariables(op.template);
    const fields: Array<{ name: string; source: FieldSource }> = [];
    for (const [name, text] of Object.entries(rule.fields ?? {})) {
      const source = parseFieldSource(text, variables);
      if (typeof source !== 'string') fields.push({ name, source });
    }
    const operation: AuditedOperation = {
      key: `${op.method} ${op.template}`,
      method: op.method,
      template: op.template,
      description: clip(rule.description ?? (typeof summary === 'string' && summary.trim() !== '' ? summary : `${op.method} ${op.template}`), DESCRIPTION_MAX),
      rule,
      fields,
      wantsBody: rule.body === true || fields.some((f) => f.source.kind === 'body'),
    };
    compiled.push(operation);
  }
  return compiled.length === 0 ? undefined : new OperationAuditIndex(compiled);
}

/** The request body as the data plane kept it aside. */
export interface CallBody {
  /** The first bytes, or null when the body was larger than 64 KB and nothing was kept. */
  readonly bytes: Uint8Array | null;
  /** Bytes received in all. */
  readonly size: number;
  /** false when the answer came before the whole body did (a streamed body the service did not read). */
  readonly complete: boolean;
}

/** What the data plane saw of one call of an audited operation. */
export interface OperationCall {
  /** Epoch ms when the answer ended or the caller left. */
  readonly at: number;
  readonly routeId: string;
  readonly match: OperationMatch;
  readonly method: string;
  /** Path as asked, percent-encoded, without the query. */
  readonly path: string;
  readonly query: string;
  readonly headers: Readonly<Record<string, string>>;
  /** The status the caller got; 499 when the caller left before any answer. */
  readonly status: number;
  /** The caller left before the answer ended. */
  readonly aborted: boolean;
  readonly address: string;
  readonly traceId: string | null;
  /** null: nobody authenticated (an open route, or a call refused before the caller was known). */
  readonly user: {
    readonly id: string | null;
    readonly name: string;
    readonly token: string | null;
    readonly roles: readonly string[];
  } | null;
  /** The caller's organisation; with no caller, the route's. */
  readonly tenant: { readonly id: string; readonly name: string } | null;
  readonly group: string | null;
  /** undefined: the body was never read (a call refused before it, or a method without body). */
  readonly body: CallBody | undefined;
}

/** Longest value of an `audit.field.*` attribute. */
export const FIELD_VALUE_MAX = 1000;

function isJsonType(contentType: string | undefined): boolean {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

function atPointer(value: unknown, pointer: readonly string[]): { found: boolean; value?: unknown } {
  let at = value;
  for (const token of pointer) {
    if (Array.isArray(at)) {
      if (!/^(0|[1-9]\d*)$/.test(token) || Number(token) >= at.length) return { found: false };
      at = at[Number(token)];
    } else if (typeof at === 'object' && at !== null && Object.hasOwn(at, token)) {
      at = (at as Record<string, unknown>)[token];
    } else {
      return { found: false };
    }
  }
  return { found: true, value: at };
}

/** The parsed JSON body, or the reason it is not kept. */
function readBody(call: OperationCall): { json: unknown } | { omitted: string } | undefined {
  const body = call.body;
  if (body === undefined) return call.method === 'GET' || call.method === 'HEAD' ? undefined : { omitted: 'not read: the call was refused before its body was read' };
  if (body.size === 0) return undefined;
  if (body.bytes === null || body.size > BODY_MAX_BYTES) return { omitted: `larger than 64 KB (${body.size} bytes)` };
  if (!body.complete) return { omitted: 'not received whole: the answer came before the body ended' };
  if (!isJsonType(call.headers['content-type'])) return { omitted: `not JSON (${call.headers['content-type'] ?? 'no content type'})` };
  try {
    return { json: JSON.parse(Buffer.from(body.bytes.buffer, body.bytes.byteOffset, body.bytes.byteLength).toString('utf8')) as unknown };
  } catch {
    return { omitted: 'not valid JSON' };
  }
}

function fieldValue(call: OperationCall, source: FieldSource, json: unknown, secret: (name: string) => boolean, secretFields: readonly string[]): unknown {
  let name: string | undefined;
  let value: unknown;
  switch (source.kind) {
    case 'path':
      name = source.name;
      value = call.match.variables[source.name];
      break;
    case 'query':
      name = source.name;
      value = new URLSearchParams(call.query).get(source.name) ?? undefined;
      break;
    case 'header':
      name = source.name;
      value = call.headers[source.name];
      break;
    case 'body': {
      if (json === undefined) return undefined;
      name = source.pointer.at(-1);
      const at = atPointer(json, source.pointer);
      if (!at.found) return undefined;
      value = at.value;
      break;
    }
  }
  if (value === undefined) return undefined;
  // A pointer that passes through a secret field (`/passwords/0`, `/credentials/key`) reads a secret too.
  const names = source.kind === 'body' ? source.pointer : name === undefined ? [] : [name];
  if (names.some((n) => secret(n))) return value === null ? null : MASK;
  if (typeof value === 'object' && value !== null) return clip(maskBody(value, secretFields), FIELD_VALUE_MAX);
  return typeof value === 'string' ? clip(value, FIELD_VALUE_MAX) : value;
}

/** The audit line of one call (part `operations`, action `operation.call`). */
export function operationEntry(call: OperationCall): AuditEntry {
  const { operation } = call.match;
  const secretFields = operation.rule.secretFields ?? [];
  const attributes: Record<string, unknown> = {};
  const put = (key: string, value: unknown) => {
    if (value !== undefined) attributes[key] = value;
  };
  if (call.user) {
    put('user.id', call.user.id ?? undefined);
    put('user.name', call.user.name);
    put('gateway.roles', [...call.user.roles]);
  }
  if (call.tenant) {
    put('gateway.tenant.id', call.tenant.id);
    put('gateway.tenant.name', call.tenant.name);
  }
  put('gateway.group', call.group ?? undefined);
  put('gateway.route', call.routeId);
  put('http.request.method', call.method);
  put('http.route', operation.template);
  put('url.path', call.path);
  put('http.response.status_code', call.status);
  put('client.address', call.address);
  if (call.aborted) put('gateway.outcome', 'aborted');

  const body = operation.wantsBody ? readBody(call) : undefined;
  const json = body !== undefined && 'json' in body ? body.json : undefined;
  if (operation.fields.length > 0) {
    const secret = bodySecretTest(secretFields);
    for (const { name, source } of operation.fields) put(`audit.field.${name}`, fieldValue(call, source, json, secret, secretFields));
  }
  if (operation.rule.body === true && body !== undefined) {
    if ('json' in body) put('http.request.body', maskBody(body.json, secretFields));
    else put('audit.body.omitted', body.omitted);
  }

  return {
    at: call.at,
    part: 'operations',
    action: 'operation.call',
    actorAccount: call.user?.name ?? null,
    actorToken: call.user?.token ?? null,
    targetKind: 'operation',
    targetId: call.routeId,
    targetName: operation.key,
    organisation: call.tenant?.id ?? null,
    changes: null,
    detail: operation.description,
    address: call.address,
    traceId: call.traceId,
    attributes,
  };
}
