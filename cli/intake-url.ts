import { connectorIntakeUrl, type ConnectorPlatform } from '../domain/connectors.js';
import type { CliContext } from './context.js';

/**
 * Whether PUBLIC_BASE_URL names this machine (localhost, a loopback address): what it is when unset (the
 * default `http://localhost:$PORT`), as in a shell outside the deployment, or in Compose without it.
 */
export function intakeIsLocal(ctx: CliContext): boolean {
  const host = new URL(ctx.config.publicBaseUrl).hostname;
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    host.startsWith('127.') ||
    host === '[::1]' ||
    host === '0.0.0.0'
  );
}

/** Where the platform posts the account's events: PUBLIC_BASE_URL as the CLI has it, plus the platform's path. */
export function intakeUrl(ctx: CliContext, platform: ConnectorPlatform, clientId: string): string {
  return connectorIntakeUrl(ctx.config.publicBaseUrl, platform, clientId);
}

/**
 * Warns (stderr) that the intake URLs printed name this machine, which no billing platform can reach: the
 * CLI reads PUBLIC_BASE_URL from its own environment, and an operator's shell seldom has the service's.
 */
export function warnIfLocal(ctx: CliContext, clientId: string): void {
  if (!intakeIsLocal(ctx)) return;
  ctx.warn(
    `the intake URL is on ${ctx.config.publicBaseUrl}, which a billing platform cannot reach: PUBLIC_BASE_URL is not set for this command (or names this machine). Set it to the address the API is reached at, as the service has it, and run \`recoup connectors list ${clientId}\` for the URL to paste.`,
  );
}
