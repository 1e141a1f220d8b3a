/**
 * The export's cells (spec 1.3 rule 16): RFC 4180 quoting, and no formula where a spreadsheet
 * would start a cell, whatever separator its locale splits on.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { csvCell } from '../../src/core/audit/csv.ts';

test('a formula at the start of a cell, after spaces, a semicolon or a tab is written as text', () => {
  assert.equal(csvCell('=1+1'), "'=1+1");
  assert.equal(csvCell(' =1+1'), " '=1+1");
  assert.equal(csvCell("x;=cmd|' /C calc'!A0"), `"x;'=cmd|' /C calc'!A0"`);
  assert.equal(csvCell('a;  @SUM(A1)'), `"a;  '@SUM(A1)"`);
  assert.equal(csvCell('a\t+1'), `"a\t'+1"`);
  assert.equal(csvCell('\tx'), `"'\tx"`);
  assert.equal(csvCell('-5'), "'-5");
});

test('other text is left as it is, quoted where it holds a separator, a quote or a line break', () => {
  assert.equal(csvCell('deleted'), 'deleted');
  assert.equal(csvCell('a - b = c'), 'a - b = c', 'an operator inside a sentence is not a cell start');
  assert.equal(csvCell('[{"field":"n","from":1,"to":-2}]'), '"[{""field"":""n"",""from"":1,""to"":-2}]"', 'JSON after a comma is untouched');
  assert.equal(csvCell('one;two'), '"one;two"');
  assert.equal(csvCell('two\nlines'), '"two\nlines"');
});
