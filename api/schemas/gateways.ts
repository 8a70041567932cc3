import { z } from 'zod';

/** Path of a gateway's webhook URL. The client is checked by the handler, so an unknown one is a 404. */
export const GatewayWebhookParams = z.object({
  clientId: z.string().min(1),
});
