import { isJsonObject, mergePatch } from '../domain/merge-patch.js';
import { Settings } from '../domain/settings.js';
import { parseJsonFlag, validInput } from './args.js';
import { UsageError } from './errors.js';

/** Validates complete settings; a bad one is refused with a message naming it. */
function validSettings(input: Record<string, unknown>): Settings {
  return validInput('settings', Settings, input);
}

/** The `--settings` flag as a JSON object (empty when absent): checked before anything is read. */
export function settingsFlag(text: string | undefined): Record<string, unknown> {
  if (text === undefined) return {};
  const value = parseJsonFlag('--settings', text);
  if (!isJsonObject(value)) throw new UsageError('--settings must be a JSON object');
  return value;
}

/** Settings for a new account: the `--settings` object plus the required `--webhook-url`. */
export function newAccountSettings(webhookUrl: string, settingsText: string | undefined): Settings {
  const given = settingsFlag(settingsText);
  if (given.webhookUrl !== undefined && given.webhookUrl !== webhookUrl)
    throw new UsageError('webhookUrl is given twice with different values (--webhook-url and --settings)');
  return validSettings({ ...given, webhookUrl });
}

/** Current settings with a JSON merge patch (`settingsFlag`) applied, validated as a whole. */
export function patchedSettings(current: Settings, patch: Record<string, unknown>): Settings {
  const merged = mergePatch(current, patch);
  return validSettings(isJsonObject(merged) ? merged : {});
}
