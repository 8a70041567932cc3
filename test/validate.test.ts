import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HttpError } from '../api/http-error.js';
import { ValidationError } from '../api/schemas/errors.js';
import { formatIssues, validate } from '../api/validate.js';
import { RecoveryRequest } from '../domain/recovery-request.js';

/** The `details` a 400 from `validate` carries for `input`, or null when it passes. */
function detailsOf(schema: z.ZodType, input: unknown): Record<string, string[]> | null {
  try {
    validate(schema, input);
    return null;
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    expect(error.status).toBe(400);
    return ValidationError.parse(error.body).details;
  }
}

const Body = z.object({ name: z.string(), count: z.int(), on: z.boolean().optional() }).strict();

describe('validate: a missing field is "Required", a present one of the wrong type says what it must be', () => {
  it('names missing fields "Required"', () => {
    expect(detailsOf(Body, {})).toEqual({ name: ['Required'], count: ['Required'] });
  });

  it.each([
    ['a string for a number', { name: 'a', count: '1000' }, 'count', /expected number, received string/],
    ['null for a string', { name: null, count: 1 }, 'name', /expected string, received null/],
    ['a number for a string', { name: 424242, count: 1 }, 'name', /expected string/],
    ['a string for a boolean', { name: 'a', count: 1, on: 'true' }, 'on', /expected boolean/],
    ['a list for a string (a repeated query parameter)', { name: ['a', 'b'], count: 1 }, 'name', /array/],
  ])('%s', (_label, input, field, message) => {
    const details = detailsOf(Body, input);
    expect(details).toEqual({ [field]: [expect.stringMatching(message)] });
    expect(details?.[field]).not.toContain('Required');
  });

  it('names a body that is not an object under "_" with what it must be', () => {
    expect(detailsOf(Body, [{ name: 'a', count: 1 }])).toEqual({
      _: [expect.stringMatching(/expected object, received array/)],
    });
  });

  it('keeps a schema’s own message for the wrong type: amount "1000" must be an integer', () => {
    const details = detailsOf(RecoveryRequest, { paymentMethodToken: 'tok_visa', amount: '1000' });
    expect(details).toEqual({ amount: ['must be an integer in the smallest currency unit'] });
    expect(detailsOf(RecoveryRequest, { paymentMethodToken: 'tok_visa' })).toEqual({ amount: ['Required'] });
  });

  it.each([
    [49, 'must be at least 50'],
    [100_000_001, 'must be at most 100000000'],
    [50.5, 'must be an integer in the smallest currency unit'],
  ])('amount %s: %s', (amount, message) => {
    expect(detailsOf(RecoveryRequest, { paymentMethodToken: 'tok_visa', amount })).toEqual({
      amount: [message],
    });
  });
});

describe('formatIssues', () => {
  it('without the input on the issues, never calls a present field of the wrong type "Required"', () => {
    const parsed = Body.safeParse({ name: 'a', count: '1000' });
    expect(parsed.success).toBe(false);
    if (!parsed.success) expect(formatIssues(parsed.error).count).not.toContain('Required');
  });

  it('names unknown fields, even ones named like Object’s own members', () => {
    const parsed = Body.safeParse(JSON.parse('{"name":"a","count":1,"constructor":1,"__proto__":2}'), {
      reportInput: true,
    });
    expect(parsed.success).toBe(false);
    if (!parsed.success)
      expect({ ...formatIssues(parsed.error) }).toEqual({
        constructor: ['Unknown field'],
        ['__proto__']: ['Unknown field'],
      });
  });
});

describe('validate: U+0000', () => {
  const Loose = z.object({ name: z.string(), data: z.record(z.string(), z.unknown()) }).strict();

  it('names every value or key holding it, however deep, and passes the same input without it', () => {
    const deep = (depth: number, leaf: unknown): unknown =>
      depth === 0 ? leaf : { d: deep(depth - 1, leaf) };
    expect(
      detailsOf(Loose, {
        name: 'a\u0000',
        data: { list: ['ok', 'b\u0000'], 'k\u0000ey': 1, ok: deep(3, '\u0000') },
      }),
    ).toEqual({
      name: ['Must not contain U+0000'],
      'data.list.1': ['Must not contain U+0000'],
      'data.k\u0000ey': ['Must not contain U+0000'],
      'data.ok.d.d.d': ['Must not contain U+0000'],
    });
    expect(detailsOf(Loose, { name: 'a', data: { list: ['ok', 'b'], key: 1, ok: deep(3, 'x') } })).toBeNull();
  });

  it('walks a record nested deeper than the call stack allows without overflowing it', () => {
    let nested: Record<string, unknown> = { leaf: 'x\u0000' };
    for (let i = 0; i < 100_000; i += 1) nested = { n: nested };
    expect(Object.values(detailsOf(Loose, { name: 'a', data: nested }) ?? {})).toEqual([
      ['Must not contain U+0000'],
    ]);
  });
});
