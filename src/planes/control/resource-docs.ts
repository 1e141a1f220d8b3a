/** Shared pieces of the control plane's resource endpoints: answers, schemas, paths. */
import { GatewayError } from '../../http/errors.ts';
import type { Schema } from '../../http/router.ts';
import { pathId } from '../../core/validate.ts';

export const STRINGS: Schema = { type: 'array', items: { type: 'string' } };
export const TIMES: Record<string, Schema> = {
  createdAt: { type: 'integer', description: 'epoch seconds' },
  updatedAt: { type: 'integer', description: 'epoch seconds' },
};

/** The answer of a list endpoint: `{ <key>: [item, ...] }`, the list always there. */
export function listOf(key: string, item: Schema): Schema {
  return { type: 'object', required: [key], properties: { [key]: { type: 'array', items: item } } };
}

export const seconds = (ms: number): number => Math.floor(ms / 1000);

/** Standard refusals every write can give (the OpenAPI document lists them). */
export const WRITE_REFUSALS = {
  400: { description: 'a field is not valid; `field` names it' },
  401: { description: 'not signed in' },
  403: { description: 'the capability is missing, or Origin of another site' },
} as const;

export function notFound(what: string, id: string): GatewayError {
  return new GatewayError('not-found', `No ${what} has the id "${id}".`);
}

/** The id from the URL, refused with a sentence when it cannot be an id. */
export function idParam(params: Readonly<Record<string, string>>, what: string, key = 'id'): string {
  return pathId(params[key] ?? '', what);
}
