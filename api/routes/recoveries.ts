import { listRecoveries } from '../../services/recovery-list.js';
import type { Stores } from '../../store/index.js';
import { accountOf } from '../context.js';
import { badRequest } from '../http-error.js';
import { reply, route } from '../route.js';
import { RecoveriesQuery, RecoveryList } from '../schemas/recovery.js';
import { statusRecord } from '../../services/status-record.js';

/** GET /api/recoveries: the merchant's recoveries, to find what is still being worked on or what failed. */
export function recoveriesRoutes({ stores }: { stores: Stores }) {
  return [
    route({
      method: 'get',
      path: '/api/recoveries',
      tag: 'Recovery',
      summary: 'The account’s recoveries, newest first, by status or state, as status records',
      auth: 'secret',
      query: RecoveriesQuery,
      responses: { 200: { description: 'A page of recoveries', schema: RecoveryList } },
      async handle(ctx, { query }) {
        const page = await listRecoveries(stores, accountOf(ctx).id, query);
        if ('unknownCursor' in page)
          throw badRequest({ before: ['must be a transactionId of this account'] });
        return reply(200, { data: page.docs.map(statusRecord), hasMore: page.hasMore });
      },
    }),
  ];
}
