import type { Account } from '../store/accounts.js';
import { flatten, pairs } from './format.js';

/** An account as `--json` prints it (never a key or secret: those are printed only when issued). */
export function accountJson(account: Account) {
  return {
    clientId: account.id,
    name: account.name,
    testMode: account.testMode,
    gateways: account.gateways,
    connectors: account.connectors,
    nextSigningSecretFrom: account.nextSigningSecretFrom?.toISOString() ?? null,
    closingAt: account.closingAt?.toISOString() ?? null,
    settings: account.settings,
    createdAt: account.createdAt.toISOString(),
    updatedAt: account.updatedAt.toISOString(),
  };
}

/** The gateways in one line: `test (test, sandbox), adyen (adyen, local to DE AT)`. */
export function gatewaysLine(account: Account): string {
  return account.gateways
    .map((g) => {
      const notes = [
        g.kind,
        ...(g.test ? ['sandbox'] : []),
        ...(g.countries ? [`local to ${g.countries.join(' ')}`] : []),
      ];
      return `${g.name} (${notes.join(', ')})`;
    })
    .join(', ');
}

/** The command that finishes closing an account a first run of `accounts close` left half way. */
export const finishClosing = (clientId: string) => `recoup accounts close ${clientId} --confirm ${clientId}`;

/** Whether the account is open, or since when it is being closed: a closure left half way must show. */
export function accountStatus(account: Account): string {
  return account.closingAt ? `closing since ${account.closingAt.toISOString()}` : 'open';
}

/**
 * An account for people: identity first, then every setting as an aligned dotted path. One being closed
 * says so first, with the command that finishes the closure.
 */
export function accountLines(account: Account): string[] {
  return [
    ...(account.closingAt
      ? [
          `${account.id} is being closed: it takes nothing new. Finish closing it: ${finishClosing(account.id)}`,
        ]
      : []),
    ...pairs([
      ['clientId', account.id],
      ['name', account.name],
      ['status', accountStatus(account)],
      ['testMode', String(account.testMode)],
      ['gateways', gatewaysLine(account)],
      ['connectors', account.connectors.join(', ') || 'none'],
      ['nextSigningSecretFrom', account.nextSigningSecretFrom?.toISOString() ?? 'none'],
      ['createdAt', account.createdAt.toISOString()],
      ['updatedAt', account.updatedAt.toISOString()],
    ]),
    'settings:',
    ...pairs(flatten(account.settings), '  '),
  ];
}
