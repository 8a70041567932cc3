import { z } from 'zod';
import { CustomerEmail, Token } from './recovery-request.js';

/**
 * One customer of an account, named in any of the ways Recoup may know them: the body of
 * POST /api/customers/export and /erase (and the flags of `recoup customers export|erase`).
 */
export const CustomerIdentity = z
  .object({
    customerEmail: CustomerEmail.optional(),
    customerId: z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .max(256)
      .optional()
      .describe('Your id of the customer (as given to cancel-flow generate), or the billing platform’s'),
    paymentMethodTokens: z
      .array(Token)
      .min(1)
      .max(20, 'at most 20 tokens')
      .optional()
      .describe('Their payment methods, for recoveries executed without an email'),
  })
  .strict()
  .refine((b) => b.customerEmail ?? b.customerId ?? b.paymentMethodTokens, {
    message: 'name the customer by customerEmail, customerId or paymentMethodTokens',
    path: ['customerEmail'],
  });

export type CustomerIdentity = z.infer<typeof CustomerIdentity>;
