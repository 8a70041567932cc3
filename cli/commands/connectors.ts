import { parseConnectorConfig, supportedPlatforms } from '../../activities/connectors/registry.js';
import { ConnectorPlatform } from '../../domain/connectors.js';
import { integerFlag, onePositional, parseCommand, parseJsonFlag, positionalArgs } from '../args.js';
import { commandGroup, type CliContext, type Run } from '../context.js';
import { existingAccount, noAccount, refuseIfClosing } from '../existing-account.js';
import { NotFoundError, UsageError } from '../errors.js';
import { pairs, table } from '../format.js';
import { intakeIsLocal, intakeUrl, warnIfLocal } from '../intake-url.js';
import { jsonFlag, print } from '../output.js';

const setUsage = "recoup connectors set <clientId> <platform> --config '<json>' [--json]";
const removeUsage = 'recoup connectors remove <clientId> <platform> [--json]';
const listUsage = 'recoup connectors list <clientId> [--events <n>] [--json]';
export const connectorsUsage = [setUsage, removeUsage, listUsage];

/** `<clientId> <platform>`, the platform one this version has a connector for. */
function target(positionals: string[], usage: string): { clientId: string; platform: ConnectorPlatform } {
  const { clientId, platform: platformText } = positionalArgs(positionals, ['clientId', 'platform'], usage);
  const platform = ConnectorPlatform.safeParse(platformText);
  if (!platform.success || !supportedPlatforms.includes(platform.data))
    throw new UsageError(`unknown platform "${platformText}" (usable: ${supportedPlatforms.join(', ')})`);
  return { clientId, platform: platform.data };
}

/**
 * Connects a platform and prints its intake URL; one on this machine (PUBLIC_BASE_URL unset here) is
 * printed with a warning on stderr rather than as the URL to paste.
 */
function set(argv: string[]): Run {
  const { values, positionals } = parseCommand(argv, { ...jsonFlag, config: { type: 'string' } });
  const { clientId, platform } = target(positionals, setUsage);
  if (values.config === undefined) throw new UsageError(`--config is required; usage: ${setUsage}`);
  const config = parseJsonFlag('--config', values.config);
  return async (ctx) => {
    const loaded = await ctx.stores.accounts.withGateways(clientId);
    if (!loaded) throw noAccount(clientId);
    refuseIfClosing(loaded.account);
    const parsed = parseConnectorConfig(platform, config, loaded.gateways);
    if ('problem' in parsed) throw new UsageError(`--config: ${platform}: ${parsed.problem}`);
    await ctx.stores.accounts.setConnector(clientId, platform, parsed.config);
    const url = intakeUrl(ctx, platform, clientId);
    print(ctx, values.json, { clientId, platform, intakeUrl: url }, () => [
      intakeIsLocal(ctx)
        ? `Connected ${platform} to ${clientId}. Its intake URL as this command sees it (on this machine, see the warning):`
        : `Connected ${platform} to ${clientId}. Paste the intake URL into ${platform}'s webhook settings:`,
      ...pairs([['intakeUrl', url]]),
    ]);
    warnIfLocal(ctx, clientId);
  };
}

function remove(argv: string[]): Run {
  const { values, positionals } = parseCommand(argv, jsonFlag);
  const { clientId, platform } = target(positionals, removeUsage);
  return async (ctx) => {
    const account = await existingAccount(ctx, clientId);
    if (!account.connectors.includes(platform))
      throw new NotFoundError(`${clientId} has no ${platform} connector`);
    await ctx.stores.accounts.removeConnector(clientId, platform);
    print(ctx, values.json, { clientId, platform, removed: true }, () => [
      `Removed the ${platform} connector of ${clientId}: its intake URL now answers 404.`,
    ]);
  };
}

function list(argv: string[]): Run {
  const { values, positionals } = parseCommand(argv, {
    ...jsonFlag,
    events: { type: 'string', default: '10' },
  });
  const clientId = onePositional(positionals, 'clientId', listUsage);
  const limit = integerFlag('--events', values.events, 0, 1000);
  return async (ctx) => {
    const account = await existingAccount(ctx, clientId);
    const connectors = await Promise.all(
      account.connectors.map(async (platform) => ({
        platform,
        intakeUrl: intakeUrl(ctx, platform, clientId),
        problem: await problemOf(ctx, clientId, platform),
      })),
    );
    const events = limit > 0 ? await ctx.stores.connectorEvents.latest(clientId, limit) : [];
    const eventRows = events.map((e) => ({
      platform: e.platform,
      eventId: e.eventId,
      type: e.type,
      receivedAt: e.receivedAt.toISOString(),
      outcome: e.outcome ?? 'unfinished',
      ...(e.reason ? { reason: e.reason } : {}),
    }));
    print(ctx, values.json, { clientId, connectors, events: eventRows }, () => [
      ...(connectors.length === 0
        ? [`${clientId} has no connectors: add one with \`recoup connectors set\`.`]
        : table(
            ['PLATFORM', 'INTAKE URL'],
            connectors.map((c) => [c.platform, c.intakeUrl]),
          )),
      ...(eventRows.length === 0
        ? []
        : [
            '',
            'Latest platform events:',
            ...table(
              ['RECEIVED', 'PLATFORM', 'TYPE', 'EVENT ID', 'OUTCOME'],
              eventRows.map((e) => [
                e.receivedAt,
                e.platform,
                e.type,
                e.eventId,
                e.reason ? `${e.outcome}: ${e.reason}` : e.outcome,
              ]),
            ),
          ]),
    ]);
    for (const c of connectors)
      if (c.problem)
        ctx.warn(
          `the ${c.platform} connector of ${clientId} needs its configuration set again: ${c.problem}`,
        );
    if (connectors.length > 0) warnIfLocal(ctx, clientId);
  };
}

/**
 * What is wrong with a connector's stored configuration by this version's rules (one stored before they
 * changed: a Chargebee connector without API access now recovers nothing), or null.
 */
async function problemOf(
  ctx: CliContext,
  clientId: string,
  platform: ConnectorPlatform,
): Promise<string | null> {
  const loaded = await ctx.stores.accounts.withConnector(clientId, platform);
  if (!loaded) return null;
  const parsed = parseConnectorConfig(platform, loaded.config, loaded.gateways);
  return 'problem' in parsed ? parsed.problem : null;
}

/** `recoup connectors <subcommand> …`: billing-platform connectors of an account. */
export const connectorsCommand = commandGroup('connectors', { set, remove, list });
