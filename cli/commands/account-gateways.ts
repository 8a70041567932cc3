import { accountJson, accountLines } from '../account-view.js';
import { onePositional, parseCommand } from '../args.js';
import type { Run } from '../context.js';
import { UsageError } from '../errors.js';
import { accountToChange, noAccount } from '../existing-account.js';
import { parseGateways } from '../gateway-spec.js';
import { jsonFlag, print } from '../output.js';
import { replaceGateways } from '../../services/account-gateways.js';

/** The usage of `recoup accounts set-gateways` as `recoup help` lists it: two lines. */
export const setGatewaysUsage = [
  'recoup accounts set-gateways <clientId> --gateway test|<kind>[@<countries>]:<json credentials>',
  '                       [--backup-gateway <kind>[@<countries>]:<json credentials>]… [--json]',
];
/** The same on one line, for error messages. */
const usage = setGatewaysUsage.map((l) => l.trim()).join(' ');

/**
 * `recoup accounts set-gateways`: replaces the account's gateways, given as at creation (a rotated key, a new
 * backup, Adyen's webhook HMAC key). Refused (exit 1) while a gateway that goes may still be charged by a
 * recovery under way, when a configured connector would no longer work, or while the account is being closed.
 */
export function setGateways(argv: string[]): Run {
  const { values, positionals } = parseCommand(argv, {
    ...jsonFlag,
    gateway: { type: 'string' },
    'backup-gateway': { type: 'string', multiple: true, default: [] },
  });
  const clientId = onePositional(positionals, 'clientId', usage);
  if (!values.gateway) throw new UsageError(`--gateway is required; usage: ${usage}`);
  const gateways = parseGateways(values.gateway, values['backup-gateway']);
  return async (ctx) => {
    await accountToChange(ctx, clientId);
    const outcome = await replaceGateways(ctx.stores, clientId, gateways);
    if (outcome.kind === 'not_found') throw noAccount(clientId);
    if (outcome.kind === 'refused')
      throw new Error(`the gateways of ${clientId} are unchanged: ${outcome.reason}`);
    print(ctx, values.json, accountJson(outcome.account), () => [
      `Set the gateways of ${clientId}.`,
      ...accountLines(outcome.account),
    ]);
  };
}
