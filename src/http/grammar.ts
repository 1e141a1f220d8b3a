/**
 * HTTP's token (RFC 9110 5.6.2): what a method and a header name are made of. One rule for every
 * place that checks one: where a caller writes a header name (schedules, audit rules), where the
 * gateway writes a request to a service, and where it reads the service's answer.
 */
export const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** A header name a caller may write into the configuration: a token of at most 100 characters. */
export function isHeaderName(name: string): boolean {
  return name.length <= 100 && TOKEN.test(name);
}
