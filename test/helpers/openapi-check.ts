/**
 * Checks real answers against the OpenAPI 3.1 document the same gateway serves: the operation is
 * found by its method and path template, then the status must be declared, the media type must be
 * the declared one and the body must validate against the declared schema (JSON Schema 2020-12,
 * ajv). It also says where a schema is too loose to fail: a 2xx JSON body with no schema, an
 * object whose members the schema does not describe, or names without saying which are required,
 * a member answered that the schema does not name. Findings are collected per operation, so a
 * test can name the operation that drifted.
 */
import Ajv2020 from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import type { Answer } from './http.ts';

// ajv is CommonJS: imported from ES modules (NodeNext), its class is the module's `default`.
const Ajv = Ajv2020.default;

type SchemaObject = Readonly<Record<string, unknown>>;

interface ResponseObject {
  readonly description: string;
  readonly content?: Readonly<Record<string, { readonly schema?: SchemaObject }>>;
  readonly headers?: Readonly<Record<string, unknown>>;
}

export interface OpenApiDocument {
  readonly openapi: string;
  readonly paths: Readonly<Record<string, Readonly<Record<string, { readonly responses: Readonly<Record<string, ResponseObject>> }>>>>;
  readonly components?: unknown;
}

interface Operation {
  /** `GET /api/routes/{id}`: how findings and coverage name it. */
  readonly key: string;
  readonly method: string;
  readonly template: string;
  readonly segments: readonly string[];
  readonly responses: Readonly<Record<string, ResponseObject>>;
}

/** The finding of a 2xx JSON body whose operation declares no schema for it. */
export const UNDESCRIBED_JSON = 'a JSON body, but no schema is declared (a generated client reads it as unknown)';

/**
 * The finding of an object schema of a 2xx body that names its members but none as required
 * (state `required: []` when every member really may be left out).
 */
export const NO_REQUIRED = 'an object whose members the schema names, but no `required` (a generated client makes each optional)';

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace']);

/** A JSON pointer token (RFC 6901). */
const token = (s: string): string => s.replaceAll('~', '~0').replaceAll('/', '~1');

const isJsonMedia = (media: string): boolean => media === 'application/json' || media.endsWith('+json');

const mediaOf = (a: Answer): string | undefined => {
  const raw = a.headers['content-type'];
  const value = Array.isArray(raw) ? raw.join(',') : raw;
  return value === undefined ? undefined : value.split(';')[0]!.trim().toLowerCase();
};

/** One ajv error as a person reads it: where in the body, what, and the value's name when it helps. */
function describeError(e: ErrorObject): string {
  // Items of a list are told once, not once per index.
  const at = `body${e.instancePath.replace(/\/\d+(?=\/|$)/g, '/[]')}`;
  if (e.keyword === 'additionalProperties') return `${at}: member "${String(e.params.additionalProperty)}" is not allowed by the schema`;
  if (e.keyword === 'enum') return `${at}: ${e.message ?? 'not in the enum'} ${JSON.stringify(e.params.allowedValues)}`;
  return `${at}: ${e.message ?? e.keyword}`;
}

/** Whether a schema allows `kind` (a JSON type name) by its `type`; no `type` allows anything. */
function allows(schema: SchemaObject, kind: string): boolean {
  const type = schema.type;
  if (type === undefined) return true;
  const types = Array.isArray(type) ? type : [type];
  return types.includes(kind) || (kind === 'integer' && types.includes('number'));
}

/** Whether `kind` is the only JSON type a schema allows besides null (an object, or null). */
function allowsOnly(schema: SchemaObject, kind: string): boolean {
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  return types.includes(kind) && types.every((t) => t === kind || t === 'null');
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

export class OpenApiCheck {
  private readonly ajv: InstanceType<typeof Ajv>;
  private readonly id: string;
  private readonly operations: readonly Operation[];
  private readonly findings = new Map<string, Set<string>>();
  private readonly statuses = new Map<string, Set<number>>();
  private readonly unmatched = new Set<string>();

  constructor(readonly plane: string, private readonly document: OpenApiDocument) {
    this.id = `urn:meerkat:openapi:${plane}`;
    // strict: false because the document around the schemas (openapi, info, paths…) is not JSON
    // Schema; the formats the schemas name are checked, not ignored.
    this.ajv = new Ajv({ strict: false, allErrors: true });
    this.ajv.addFormat('uri', { type: 'string', validate: (s: string) => URL.canParse(s) });
    this.ajv.addFormat('date-time', { type: 'string', validate: (s: string) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/i.test(s) && !Number.isNaN(Date.parse(s)) });
    // The whole document under one id: a schema's `#/components/...` reference resolves in it.
    this.ajv.addSchema(document as unknown as SchemaObject, this.id);
    this.operations = Object.entries(document.paths).flatMap(([template, item]) =>
      Object.entries(item).filter(([method]) => HTTP_METHODS.has(method)).map(([method, op]) => ({
        key: `${method.toUpperCase()} ${template}`, method: method.toUpperCase(), template,
        segments: template.split('/').slice(1), responses: op.responses,
      })));
    for (const op of this.operations) this.lint(op);
  }

  /** Every operation of the document, as `METHOD /template`. */
  operationKeys(): string[] {
    return this.operations.map((o) => o.key);
  }

  /** What the document got wrong for one operation (empty when every answer matched). */
  findingsOf(key: string): string[] {
    return [...(this.findings.get(key) ?? [])];
  }

  /** The statuses answered for one operation (empty: never exercised). */
  statusesOf(key: string): number[] {
    return [...(this.statuses.get(key) ?? [])].sort((a, b) => a - b);
  }

  /** Requests no operation of the document matches (a path the test thought was documented). */
  unmatchedRequests(): string[] {
    return [...this.unmatched];
  }

  /** Checks one exchange: `target` is the path (and query) asked. */
  check(method: string, target: string, answer: Answer): void {
    const path = target.split('?')[0]!;
    const op = this.find(method.toUpperCase(), path);
    if (op === undefined) {
      this.unmatched.add(`${method.toUpperCase()} ${path} → ${answer.status}`);
      return;
    }
    let seen = this.statuses.get(op.key);
    if (!seen) this.statuses.set(op.key, (seen = new Set()));
    seen.add(answer.status);
    const status = String(answer.status);
    const response = op.responses[status] ?? op.responses[`${status[0]}XX`] ?? op.responses.default;
    if (response === undefined) {
      this.note(op, `${status}: the status is not declared (declared: ${Object.keys(op.responses).join(', ')})`);
      return;
    }
    for (const problem of this.problemsOf(op, status, response, answer)) this.note(op, `${status}: ${problem}`);
  }

  /**
   * The operation a concrete path belongs to. A literal segment is more specific than a template
   * one (`/api/certificates/mounts` before `/api/certificates/{id}`), as OpenAPI reads paths.
   */
  private find(method: string, path: string): Operation | undefined {
    let segs: string[];
    try {
      segs = path.split('/').slice(1).map((s) => decodeURIComponent(s));
    } catch {
      return undefined;
    }
    const fits = (o: Operation) => o.segments.length === segs.length
      && o.segments.every((p, i) => (p.startsWith('{') && p.endsWith('}') ? segs[i] !== '' : p === segs[i]));
    const literals = (o: Operation) => o.segments.filter((p) => !p.startsWith('{')).length;
    const candidates = this.operations.filter((o) => o.method === method && fits(o));
    return candidates.sort((a, b) => literals(b) - literals(a))[0];
  }

  private problemsOf(op: Operation, status: string, response: ResponseObject, answer: Answer): string[] {
    const media = mediaOf(answer);
    const declared = Object.keys(response.content ?? {});
    const hasBody = answer.text.length > 0;
    const problems: string[] = [];
    if (status === '201' && answer.headers.location === undefined) problems.push('no Location header, which the document promises on every 201');
    if (declared.length === 0) {
      if (!hasBody) return problems;
      if (status.startsWith('2') && media !== undefined && isJsonMedia(media)) {
        problems.push(UNDESCRIBED_JSON);
      } else {
        problems.push(`a body (${media ?? 'no content-type'}) where the document declares none`);
      }
      return problems;
    }
    if (media === undefined || !declared.includes(media)) {
      problems.push(`content-type ${media ?? '(none)'}, declared ${declared.join(' or ')}`);
      return problems;
    }
    const schema = response.content![media]!.schema;
    if (schema === undefined) return [...problems, `no schema declared for ${media}`];
    if (!isJsonMedia(media)) return problems;
    let body: unknown;
    try {
      body = JSON.parse(answer.text);
    } catch {
      return [...problems, `the body is not JSON though ${media} is declared`];
    }
    const validate = this.validator(op, status, media);
    if (!validate(body)) problems.push(...(validate.errors ?? []).map(describeError));
    else if (status.startsWith('2')) problems.push(...this.unnamed(schema, body, 'body'));
    if (Number(status) >= 400 && typeof body === 'object' && body !== null && (body as { status?: unknown }).status !== Number(status)) {
      problems.push(`the problem's status member (${String((body as { status?: unknown }).status)}) is not the answer's status`);
    }
    return problems;
  }

  private validator(op: Operation, status: string, media: string): ValidateFunction {
    const pointer = ['paths', op.template, op.method.toLowerCase(), 'responses', status, 'content', media, 'schema'].map(token).join('/');
    const validate = this.ajv.getSchema(`${this.id}#/${pointer}`);
    if (validate === undefined) throw new Error(`no schema at ${pointer}`);
    return validate;
  }

  /** A local `$ref` followed into the document. */
  private deref(schema: SchemaObject): SchemaObject {
    const ref = schema.$ref;
    if (typeof ref !== 'string' || !ref.startsWith('#/')) return schema;
    let at: unknown = this.document;
    for (const part of ref.slice(2).split('/')) at = (at as Record<string, unknown>)[part.replaceAll('~1', '/').replaceAll('~0', '~')];
    return this.deref(at as SchemaObject);
  }

  /**
   * Where a 2xx schema could not fail, whatever the gateway answered: an object typed but with
   * no word on its members, or naming them with no `required`; an array with no word on its
   * items. A schema with no `type` is "any JSON" on purpose (a schedule's body), and
   * `additionalProperties: true` says a map is free.
   */
  private lint(op: Operation): void {
    for (const [status, response] of Object.entries(op.responses)) {
      if (!status.startsWith('2')) continue;
      for (const [media, { schema }] of Object.entries(response.content ?? {})) {
        if (schema === undefined || !isJsonMedia(media)) continue;
        for (const where of this.openSpots(schema, 'body', new Set())) this.note(op, `${status}: ${where}`);
      }
    }
  }

  private openSpots(raw: SchemaObject, at: string, seen: Set<SchemaObject>): string[] {
    const schema = this.deref(raw);
    if (seen.has(schema)) return [];
    seen.add(schema);
    const out: string[] = [];
    for (const branch of [...((schema.oneOf ?? []) as SchemaObject[]), ...((schema.anyOf ?? []) as SchemaObject[]), ...((schema.allOf ?? []) as SchemaObject[])]) {
      out.push(...this.openSpots(branch, at, seen));
    }
    if (allowsOnly(schema, 'object') && schema.properties === undefined && schema.additionalProperties === undefined && schema.patternProperties === undefined) {
      out.push(`${at}: a bare type: object, whose members the schema does not describe`);
    }
    // Without `required` a generated client makes every member optional, even those always sent
    // (members named without a `type` describe an object too). `required: []` says so on purpose:
    // every member may be left out. A free-form object (`additionalProperties: true`) is free.
    const objectLike = schema.type === undefined || allowsOnly(schema, 'object');
    if (objectLike && schema.properties !== undefined && schema.required === undefined && schema.additionalProperties !== true) {
      out.push(`${at}: ${NO_REQUIRED}`);
    }
    if (allowsOnly(schema, 'array') && schema.items === undefined && schema.prefixItems === undefined) {
      out.push(`${at}: an array whose items the schema does not describe`);
    }
    for (const [name, sub] of Object.entries((schema.properties ?? {}) as Record<string, SchemaObject>)) out.push(...this.openSpots(sub, `${at}.${name}`, seen));
    if (typeof schema.additionalProperties === 'object' && schema.additionalProperties !== null) out.push(...this.openSpots(schema.additionalProperties as SchemaObject, `${at}.*`, seen));
    if (typeof schema.items === 'object' && schema.items !== null) out.push(...this.openSpots(schema.items as SchemaObject, `${at}[]`, seen));
    return out;
  }

  /**
   * Members a body that validates carries but its schema does not name: a generated client drops
   * them. (Where the schema says nothing of the members at all, `lint` has told already.)
   */
  private unnamed(raw: SchemaObject, value: unknown, at: string): string[] {
    const schema = this.deref(raw);
    const branches = (schema.oneOf ?? schema.anyOf) as SchemaObject[] | undefined;
    if (branches) {
      const branch = branches.map((b) => this.deref(b)).find((b) => allows(b, kindOf(value)));
      return branch ? this.unnamed(branch, value, at) : [];
    }
    const kind = kindOf(value);
    if (kind === 'array' && typeof schema.items === 'object' && schema.items !== null) {
      return [...new Set((value as unknown[]).flatMap((item) => this.unnamed(schema.items as SchemaObject, item, `${at}[]`)))];
    }
    if (kind !== 'object' || schema.properties === undefined) return [];
    const properties = schema.properties as Record<string, SchemaObject>;
    const patterns = Object.keys((schema.patternProperties ?? {}) as Record<string, unknown>).map((p) => new RegExp(p, 'u'));
    const additional = schema.additionalProperties;
    return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => {
      if (properties[k] !== undefined) return this.unnamed(properties[k], v, `${at}.${k}`);
      if (patterns.some((p) => p.test(k))) return [];
      if (typeof additional === 'object' && additional !== null) return this.unnamed(additional as SchemaObject, v, `${at}.${k}`);
      if (additional === true) return [];
      return [`${at}.${k}: answered, but the schema does not name it`];
    });
  }

  private note(op: Operation, finding: string): void {
    let set = this.findings.get(op.key);
    if (!set) this.findings.set(op.key, (set = new Set()));
    set.add(finding);
  }
}
