import { integerFlag, onePositional, parseCommand } from '../args.js';
import type { CliContext, Run } from '../context.js';
import { accountToChange } from '../existing-account.js';
import { pairs } from '../format.js';
import { jsonFlag, print } from '../output.js';

/** The usage of `recoup accounts sweep`. */
export const sweepUsage = 'recoup accounts sweep <clientId> [--wait-seconds <1-7200>] [--json]';

/**
 * Why a sweep was `unsupported`. Its result names no reason, but the account's `cardFormUrl` narrows it:
 * with one, the gateway cannot list its cards; without one, it may instead be a gateway whose new cards only
 * the merchant's own form can take (the warnings' links would lead to a 501 page), which setting one fixes.
 */
function unsupportedSweep(clientId: string, gateway: string | null, cardFormUrl: string | null): string {
  const cannotList = `the primary gateway ${gateway ?? ''} of ${clientId} cannot list its cards`;
  if (cardFormUrl) return `Nothing to sweep: ${cannotList}.`;
  return (
    `Nothing swept: ${cannotList}, or it takes new cards only in the merchant's own card form and the ` +
    `account has no cardFormUrl for the warnings' links to lead to (set one with recoup accounts update ` +
    `${clientId} --settings '{"cardFormUrl":"https://…"}').`
  );
}

/**
 * Runs the account's card health sweep now, on the workers, and prints what it did; exits 1 naming the
 * workflow, which carries on, if it is not done within `--wait-seconds` (no worker running, or many cards).
 */
export function sweep(argv: string[]): Run {
  const { values, positionals } = parseCommand(argv, {
    ...jsonFlag,
    'wait-seconds': { type: 'string', default: '60' },
  });
  const clientId = onePositional(positionals, 'clientId', sweepUsage);
  const waitSeconds = integerFlag('--wait-seconds', values['wait-seconds'], 1, 7200);
  return (ctx) => sweepNow(ctx, clientId, waitSeconds, values.json);
}

/** The sweep itself, once `sweep`'s arguments are checked. */
async function sweepNow(
  ctx: CliContext,
  clientId: string,
  waitSeconds: number,
  json: boolean,
): Promise<void> {
  const account = await accountToChange(ctx, clientId);
  if (!account.settings.cardHealthSweep.enabled)
    throw new Error(
      `the card health sweep of ${clientId} is disabled; enable it with recoup accounts update ${clientId} --settings '{"cardHealthSweep":{"enabled":true}}'`,
    );
  // Loaded here: the other accounts commands never need the Temporal SDK.
  const { runCardSweep } = await import('../../services/card-sweep.js');
  const { workflowId, result } = await runCardSweep(
    await ctx.temporal(),
    ctx.queues,
    clientId,
    waitSeconds * 1000,
  );
  if (!result)
    throw new Error(
      `the card health sweep of ${clientId} did not finish within ${waitSeconds} s (are workers running?); it carries on as workflow ${workflowId}: follow it in the Temporal UI`,
    );
  print(ctx, json, { clientId, workflowId, ...result }, () => [
    {
      swept: `Swept the cards of ${clientId} on gateway ${result.gateway ?? ''}.`,
      unsupported: unsupportedSweep(clientId, result.gateway, account.settings.cardFormUrl),
      disabled: `The card health sweep of ${clientId} was disabled before it ran: nothing swept.`,
    }[result.outcome],
    ...pairs([
      ['workflowId', workflowId],
      ['cards', String(result.cards)],
      [
        `expiring within ${account.settings.cardHealthSweep.daysBeforeExpiry} days`,
        String(result.expiringSoon),
      ],
      ['warned now (card.expiring_soon)', String(result.warned)],
    ]),
  ]);
}
