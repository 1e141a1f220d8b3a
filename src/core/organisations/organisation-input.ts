import { invalidField } from '../../http/errors.ts';
import type { OrganisationHours } from '../model.ts';
import { parseHours } from '../../pipeline/hours.ts';
import { objectBody, requiredString } from '../validate.ts';

export interface OrganisationInput {
  readonly id: string;
  readonly name: string;
  readonly hours: OrganisationHours | null;
}

export function parseOrganisation(id: string, value: unknown): OrganisationInput {
  const body = objectBody(value, ['name', 'hours'], 'an organisation');
  const hours = parseHours(body.hours);
  if ('error' in hours) throw invalidField(hours.field, hours.error);
  return { id, name: requiredString(body, 'name', { max: 200 }), hours: hours.hours };
}
