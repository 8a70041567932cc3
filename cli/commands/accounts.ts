import { integerFlag, onePositional, parseCommand } from '../args.js';
import { accountJson, accountLines, gatewaysLine } from '../account-view.js';
import { setGateways, setGatewaysUsage } from './account-gateways.js';
import { commandGroup, type CliContext } from '../context.js';
import { existingAccount } from '../existing-account.js';
import { jsonFlag, print } from '../output.js';
import { NotFoundError, UsageError } from '../errors.js';
import { pairs, table } from '../format.js';
import { parseGateways } from '../gateway-spec.js';
import { newAccountSettings, patchedSettings } from '../settings-input.js';

const rotateWebhookSecretUsage =
  'recoup accounts rotate-webhook-secret <clientId> [--grace-hours <0-720>] [--json]';
const sweepUsage = 'recoup accounts sweep <clientId> [--wait-seconds <1-7200>] [--json]';
export const accountsUsage = [
  'recoup accounts create --name <s> --webhook-url <https url>',
  '                       --gateway test|<kind>[@<countries>]:<json credentials>',
  '                       [--backup-gateway <kind>[@<countries>]:<json credentials>]… [--settings <json>]',
  '                       [--json]',
  'recoup accounts list [--json]',
  'recoup accounts show <clientId> [--json]',
  'recoup accounts update <clientId> --settings <json merge patch> [--json]',
  ...setGatewaysUsage,
  'recoup accounts rotate-key <clientId> [--json]',
  rotateWebhookSecretUsage,
  sweepUsage,
  'recoup accounts close <clientId> --confirm <clientId> [--json]',
];

const json = jsonFlag;

async function create(argv: string[], ctx: CliContext): Promise<void> {
  const { values, positionals } = parseCommand(argv, {
    ...json,
    name: { type: 'string' },
    'webhook-url': { type: 'string' },
    gateway: { type: 'string' },
    'backup-gateway': { type: 'string', multiple: true, default: [] },
    settings: { type: 'string' },
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const name = values.name?.trim();
  if (!name) throw new UsageError('--name is required');
  if (!values['webhook-url']) throw new UsageError('--webhook-url is required');
  if (!values.gateway) throw new UsageError('--gateway is required (e.g. --gateway test)');
  const settings = newAccountSettings(values['webhook-url'], values.settings);
  const gateways = parseGateways(values.gateway, values['backup-gateway']);
  const created = await ctx.stores.accounts.create({ name, settings, gateways });
  const { clientId, ...view } = accountJson(created.account);
  const result = {
    clientId,
    apiKey: created.apiKey,
    publishableKey: created.publishableKey,
    webhookSigningSecret: created.webhookSigningSecret,
    ...view,
  };
  print(ctx, values.json, result, () => [
    `Created account ${created.account.id}. The keys and the signing secret are shown only now: keep them.`,
    ...pairs([
      ['clientId', result.clientId],
      ['apiKey', result.apiKey],
      ['publishableKey', result.publishableKey],
      ['webhookSigningSecret', result.webhookSigningSecret],
      ['testMode', String(result.testMode)],
      ['gateways', gatewaysLine(created.account)],
    ]),
  ]);
}

async function list(argv: string[], ctx: CliContext): Promise<void> {
  const { values, positionals } = parseCommand(argv, json);
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const accounts = await ctx.stores.accounts.list();
  print(ctx, values.json, accounts.map(accountJson), () =>
    accounts.length === 0
      ? ['No accounts yet: create one with `recoup accounts create`.']
      : table(
          ['CLIENT ID', 'NAME', 'TEST MODE', 'GATEWAYS', 'CREATED'],
          accounts.map((a) => [a.id, a.name, String(a.testMode), gatewaysLine(a), a.createdAt.toISOString()]),
        ),
  );
}

async function show(argv: string[], ctx: CliContext): Promise<void> {
  const { values, positionals } = parseCommand(argv, json);
  const account = await existingAccount(
    ctx,
    onePositional(positionals, 'clientId', 'recoup accounts show <clientId>'),
  );
  print(ctx, values.json, accountJson(account), () => accountLines(account));
}

async function update(argv: string[], ctx: CliContext): Promise<void> {
  const usage = "recoup accounts update <clientId> --settings '<json>'";
  const { values, positionals } = parseCommand(argv, { ...json, settings: { type: 'string' } });
  const clientId = onePositional(positionals, 'clientId', usage);
  if (values.settings === undefined) throw new UsageError(`--settings is required; usage: ${usage}`);
  const current = await existingAccount(ctx, clientId);
  const updated = await ctx.stores.accounts.updateSettings(
    clientId,
    patchedSettings(current.settings, values.settings),
  );
  if (!updated) throw new NotFoundError(`no account with clientId ${clientId}`);
  print(ctx, values.json, accountJson(updated), () => [
    `Updated account ${clientId}.`,
    ...accountLines(updated),
  ]);
}

async function rotateKey(argv: string[], ctx: CliContext): Promise<void> {
  const { values, positionals } = parseCommand(argv, json);
  const clientId = onePositional(positionals, 'clientId', 'recoup accounts rotate-key <clientId>');
  await existingAccount(ctx, clientId);
  const keys = await ctx.stores.accounts.rotateKeys(clientId);
  const result = { clientId, apiKey: keys.apiKey, publishableKey: keys.publishableKey };
  print(ctx, values.json, result, () => [
    `Rotated the keys of ${clientId}: the old ones no longer work. The new ones are shown only now.`,
    ...pairs([
      ['clientId', clientId],
      ['apiKey', keys.apiKey],
      ['publishableKey', keys.publishableKey],
    ]),
  ]);
}

/**
 * Issues a new webhook signing secret. The current one goes on signing for `--grace-hours` (24 by
 * default), time for the merchant to make its receiver accept both; 0 switches at once (a leaked secret).
 */
async function rotateWebhookSecret(argv: string[], ctx: CliContext): Promise<void> {
  const { values, positionals } = parseCommand(argv, {
    ...json,
    'grace-hours': { type: 'string', default: '24' },
  });
  const clientId = onePositional(positionals, 'clientId', rotateWebhookSecretUsage);
  const graceHours = integerFlag('--grace-hours', values['grace-hours'], 0, 720);
  await existingAccount(ctx, clientId);
  const now = ctx.clock();
  const signsFrom = new Date(now.getTime() + graceHours * 3_600_000);
  const secret = await ctx.stores.accounts.rotateSigningSecret(clientId, signsFrom, now);
  if (!secret) throw new NotFoundError(`no account with clientId ${clientId}`);
  const result = { clientId, webhookSigningSecret: secret, signsFrom: signsFrom.toISOString() };
  print(ctx, values.json, result, () => [
    graceHours === 0
      ? `Rotated the webhook signing secret of ${clientId}: webhooks are signed with the new one from now on (within a few seconds on every worker), the old one no longer.`
      : `New webhook signing secret for ${clientId}: webhooks are signed with it from ${result.signsFrom}, with the current one until then. Make the receiver accept both before that time.`,
    'The new secret is shown only now.',
    ...pairs([
      ['clientId', clientId],
      ['webhookSigningSecret', secret],
      ['signsFrom', result.signsFrom],
    ]),
  ]);
}

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
async function sweep(argv: string[], ctx: CliContext): Promise<void> {
  const { values, positionals } = parseCommand(argv, {
    ...json,
    'wait-seconds': { type: 'string', default: '60' },
  });
  const clientId = onePositional(positionals, 'clientId', sweepUsage);
  const waitSeconds = integerFlag('--wait-seconds', values['wait-seconds'], 1, 7200);
  const account = await existingAccount(ctx, clientId);
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
  print(ctx, values.json, { clientId, workflowId, ...result }, () => [
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

/**
 * Closes an account for good when the merchant leaves, and deletes everything of it (see
 * services/account-closure.ts). `--confirm` repeats the client id: nothing of it can be brought back.
 */
async function close(argv: string[], ctx: CliContext): Promise<void> {
  const { values, positionals } = parseCommand(argv, { ...json, confirm: { type: 'string' } });
  const usage = 'recoup accounts close <clientId> --confirm <clientId>';
  const clientId = onePositional(positionals, 'clientId', usage);
  if (values.confirm !== clientId)
    throw new UsageError(`closing deletes everything of ${clientId} for good: repeat it, ${usage}`);
  await existingAccount(ctx, clientId);
  // Loaded here: the other accounts commands never need the Temporal SDK.
  const { closeAccount } = await import('../../services/account-closure.js');
  const outcome = await closeAccount(
    {
      stores: ctx.stores,
      temporal: await ctx.temporal(),
      queues: ctx.queues,
      accountCacheMs: ctx.config.accountCacheMs,
    },
    clientId,
  );
  if (outcome.kind === 'not_found') throw new NotFoundError(`no account with clientId ${clientId}`);
  if (outcome.kind === 'finishing')
    throw new Error(
      `${clientId} takes nothing new, but recoveries are finishing an attempt under way (${outcome.transactionIds.join(', ')}); they stop right after it: run the same command again to finish closing`,
    );
  const { kind: _kind, ...counts } = outcome;
  print(ctx, values.json, { clientId, closed: true, ...counts }, () => [
    `Closed ${clientId}: ${counts.recoveriesStopped} recoveries stopped, ${counts.workflowsTerminated} workflows terminated, ${counts.workflowHistories} workflow histories and ${counts.documents} documents deleted.`,
  ]);
}

/** `recoup accounts <subcommand> …`: create, inspect and change merchant accounts and their keys. */
export const accountsCommand = commandGroup('accounts', {
  create,
  list,
  show,
  update,
  'set-gateways': setGateways,
  'rotate-key': rotateKey,
  'rotate-webhook-secret': rotateWebhookSecret,
  sweep,
  close,
});
