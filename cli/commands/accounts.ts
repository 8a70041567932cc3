import { integerFlag, noPositionals, onePositional, parseCommand } from '../args.js';
import { accountJson, accountLines, accountStatus, gatewaysLine } from '../account-view.js';
import { setGateways, setGatewaysUsage } from './account-gateways.js';
import { sweep, sweepUsage } from './account-sweep.js';
import { commandGroup, type Run } from '../context.js';
import { accountToChange, existingAccount, noAccount } from '../existing-account.js';
import { jsonFlag, print } from '../output.js';
import { UsageError } from '../errors.js';
import { pairs, table } from '../format.js';
import { parseGateways } from '../gateway-spec.js';
import { newAccountSettings, patchedSettings, settingsFlag } from '../settings-input.js';

const createUsage = [
  'recoup accounts create --name <s> --webhook-url <https url>',
  '                       --gateway test|<kind>[@<countries>]:<json credentials>',
  '                       [--backup-gateway <kind>[@<countries>]:<json credentials>]… [--settings <json>]',
  '                       [--json]',
];
const listUsage = 'recoup accounts list [--json]';
const showUsage = 'recoup accounts show <clientId> [--json]';
const updateUsage = "recoup accounts update <clientId> --settings '<json merge patch>' [--json]";
const rotateKeyUsage = 'recoup accounts rotate-key <clientId> [--json]';
const rotateWebhookSecretUsage =
  'recoup accounts rotate-webhook-secret <clientId> [--grace-hours <0-720>] [--json]';
const closeUsage = 'recoup accounts close <clientId> --confirm <clientId> [--json]';
export const accountsUsage = [
  ...createUsage,
  listUsage,
  showUsage,
  updateUsage,
  ...setGatewaysUsage,
  rotateKeyUsage,
  rotateWebhookSecretUsage,
  sweepUsage,
  closeUsage,
];

function create(argv: string[]): Run {
  const { values, positionals } = parseCommand(argv, {
    ...jsonFlag,
    name: { type: 'string' },
    'webhook-url': { type: 'string' },
    gateway: { type: 'string' },
    'backup-gateway': { type: 'string', multiple: true, default: [] },
    settings: { type: 'string' },
  });
  noPositionals(positionals, createUsage.map((l) => l.trim()).join(' '));
  const name = values.name?.trim();
  if (!name) throw new UsageError('--name is required');
  if (!values['webhook-url']) throw new UsageError('--webhook-url is required');
  if (!values.gateway) throw new UsageError('--gateway is required (e.g. --gateway test)');
  const settings = newAccountSettings(values['webhook-url'], values.settings);
  const gateways = parseGateways(values.gateway, values['backup-gateway']);
  return async (ctx) => {
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
  };
}

function list(argv: string[]): Run {
  const { values, positionals } = parseCommand(argv, jsonFlag);
  noPositionals(positionals, listUsage);
  return async (ctx) => {
    const accounts = await ctx.stores.accounts.list();
    print(ctx, values.json, accounts.map(accountJson), () =>
      accounts.length === 0
        ? ['No accounts yet: create one with `recoup accounts create`.']
        : table(
            ['CLIENT ID', 'NAME', 'TEST MODE', 'GATEWAYS', 'CREATED', 'STATUS'],
            accounts.map((a) => [
              a.id,
              a.name,
              String(a.testMode),
              gatewaysLine(a),
              a.createdAt.toISOString(),
              accountStatus(a),
            ]),
          ),
    );
  };
}

function show(argv: string[]): Run {
  const { values, positionals } = parseCommand(argv, jsonFlag);
  const clientId = onePositional(positionals, 'clientId', showUsage);
  return async (ctx) => {
    const account = await existingAccount(ctx, clientId);
    print(ctx, values.json, accountJson(account), () => accountLines(account));
  };
}

function update(argv: string[]): Run {
  const { values, positionals } = parseCommand(argv, { ...jsonFlag, settings: { type: 'string' } });
  const clientId = onePositional(positionals, 'clientId', updateUsage);
  if (values.settings === undefined) throw new UsageError(`--settings is required; usage: ${updateUsage}`);
  const patch = settingsFlag(values.settings);
  return async (ctx) => {
    const current = await accountToChange(ctx, clientId);
    const updated = await ctx.stores.accounts.updateSettings(
      clientId,
      patchedSettings(current.settings, patch),
    );
    if (!updated) throw noAccount(clientId);
    print(ctx, values.json, accountJson(updated), () => [
      `Updated account ${clientId}.`,
      ...accountLines(updated),
    ]);
  };
}

function rotateKey(argv: string[]): Run {
  const { values, positionals } = parseCommand(argv, jsonFlag);
  const clientId = onePositional(positionals, 'clientId', rotateKeyUsage);
  return async (ctx) => {
    await accountToChange(ctx, clientId);
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
  };
}

/**
 * Issues a new webhook signing secret. The current one goes on signing for `--grace-hours` (24 by
 * default), time for the merchant to make its receiver accept both; 0 switches at once (a leaked secret).
 */
function rotateWebhookSecret(argv: string[]): Run {
  const { values, positionals } = parseCommand(argv, {
    ...jsonFlag,
    'grace-hours': { type: 'string', default: '24' },
  });
  const clientId = onePositional(positionals, 'clientId', rotateWebhookSecretUsage);
  const graceHours = integerFlag('--grace-hours', values['grace-hours'], 0, 720);
  return async (ctx) => {
    await accountToChange(ctx, clientId);
    const now = ctx.clock();
    const signsFrom = new Date(now.getTime() + graceHours * 3_600_000);
    const secret = await ctx.stores.accounts.rotateSigningSecret(clientId, signsFrom, now);
    if (!secret) throw noAccount(clientId);
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
  };
}

/**
 * Closes an account for good when the merchant leaves, and deletes everything of it (see
 * services/account-closure.ts). `--confirm` repeats the client id: nothing of it can be brought back.
 */
function close(argv: string[]): Run {
  const { values, positionals } = parseCommand(argv, { ...jsonFlag, confirm: { type: 'string' } });
  const clientId = onePositional(positionals, 'clientId', closeUsage);
  if (values.confirm !== clientId)
    throw new UsageError(`closing deletes everything of ${clientId} for good: repeat it, ${closeUsage}`);
  return async (ctx) => {
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
    if (outcome.kind === 'not_found') throw noAccount(clientId);
    if (outcome.kind === 'finishing')
      throw new Error(
        `${clientId} takes nothing new, but recoveries are finishing an attempt under way (${outcome.transactionIds.join(', ')}); they stop right after it: run the same command again to finish closing`,
      );
    const { kind: _kind, ...counts } = outcome;
    print(ctx, values.json, { clientId, closed: true, ...counts }, () => [
      `Closed ${clientId}: ${counts.recoveriesStopped} recoveries stopped, ${counts.workflowsTerminated} workflows terminated, ${counts.workflowHistories} workflow histories and ${counts.documents} documents deleted.`,
    ]);
  };
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
