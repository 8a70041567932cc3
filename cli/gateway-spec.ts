import { z } from 'zod';
import { credentialsProblem } from '../activities/gateways/registry.js';
import { GatewayKind, gatewayKinds } from '../domain/gateway-kinds.js';
import { CardOrigin } from '../domain/recovery-request.js';
import type { GatewayConfig } from '../domain/settings.js';
import { parseJsonFlag } from './args.js';
import { UsageError } from './errors.js';

const Credentials = z.record(z.string(), z.string());

function credentialsOf(flag: string, text: string | null): Record<string, string> {
  if (text === null) return {};
  const parsed = Credentials.safeParse(parseJsonFlag(flag, text));
  if (!parsed.success)
    throw new UsageError(`${flag}: credentials must be a JSON object of strings, e.g. {"apiKey":"..."}`);
  return parsed.data;
}

/** `DE,AT,CH`: the card-issuing countries a gateway acquires locally. */
function countriesOf(flag: string, text: string): string[] {
  const parsed = z.array(CardOrigin).min(1).safeParse(text.split(','));
  if (!parsed.success)
    throw new UsageError(`${flag}: countries must be 2-letter ISO country codes, e.g. @DE,AT,CH`);
  return parsed.data;
}

/** Parses `test[@<countries>]` or `<kind>[@<countries>]:<json credentials>` into a gateway without a name. */
function parseOne(flag: string, spec: string): Omit<GatewayConfig, 'name'> {
  const colon = spec.indexOf(':');
  const head = colon === -1 ? spec : spec.slice(0, colon);
  const at = head.indexOf('@');
  const kindText = at === -1 ? head : head.slice(0, at);
  const countries = at === -1 ? undefined : countriesOf(flag, head.slice(at + 1));
  const kind = GatewayKind.safeParse(kindText);
  if (!kind.success)
    throw new UsageError(`${flag}: unknown gateway kind "${kindText}" (usable: ${gatewayKinds.join(', ')})`);
  if (colon === -1 && kind.data !== 'test')
    throw new UsageError(
      `${flag}: a ${kind.data} gateway needs credentials: ${kind.data}:<json credentials>`,
    );
  const credentials = credentialsOf(flag, colon === -1 ? null : spec.slice(colon + 1));
  const problem = credentialsProblem(kind.data, credentials);
  if (problem) throw new UsageError(`${flag}: ${kind.data} credentials: ${problem}`);
  return {
    kind: kind.data,
    // Test mode means the sandbox gateway; a real gateway's own test keys are still a real gateway here.
    test: kind.data === 'test',
    credentials,
    ...(countries ? { countries } : {}),
  };
}

/** The primary gateway and the backups in order, named after their kind (`stripe`, `stripe-2`, …). */
export function parseGateways(primary: string, backups: string[]): GatewayConfig[] {
  if (backups.length > 2) throw new UsageError('--backup-gateway: at most two backups');
  const specs = [parseOne('--gateway', primary), ...backups.map((b) => parseOne('--backup-gateway', b))];
  const seen = new Map<string, number>();
  return specs.map((g) => {
    const n = (seen.get(g.kind) ?? 0) + 1;
    seen.set(g.kind, n);
    return { name: n === 1 ? g.kind : `${g.kind}-${n}`, ...g };
  });
}
