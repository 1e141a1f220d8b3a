import { test } from 'node:test';
import assert from 'node:assert/strict';
import { traceIdOf } from '../../src/planes/principal.ts';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const of = (traceparent?: string) => traceIdOf({ headers: traceparent === undefined ? {} : { traceparent } });

test('a valid traceparent gives its trace id; what W3C Trace Context calls invalid gives none', () => {
  assert.equal(of(`00-${TRACE}-00f067aa0ba902b7-01`), TRACE);
  assert.equal(of(` 00-${TRACE}-00f067aa0ba902b7-00 `), TRACE, 'spaces around');
  assert.equal(of(`01-${TRACE}-00f067aa0ba902b7-01-later-fields`), TRACE, 'a later version may carry more fields');
  for (const bad of [
    undefined, '', `ff-${TRACE}-00f067aa0ba902b7-01`, `00-${TRACE}-00f067aa0ba902b7-01-extra`, `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`,
    `00-${TRACE}-0000000000000000-01`, `00-${TRACE.toUpperCase()}-00f067aa0ba902b7-01`, `00-${TRACE}-00f067aa0ba902b7`, `0-${TRACE}-00f067aa0ba902b7-01`,
  ]) assert.equal(of(bad), null, String(bad));
});
