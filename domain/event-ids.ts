import type { EventName } from './events.js';

/**
 * The id of an event a workflow publishes: a uuid4 from the workflow's deterministic sequence with its first
 * 32 bits XORed with the FNV-1a hash of the event name (still a version-4 UUID). A task retaken on the same
 * path draws the same uuid for the same event and so publishes it once; a task retaken on another path (a
 * signal that came while its first taker died) draws the same uuid for a different event, which thus keeps
 * an id of its own instead of being taken for the event already published.
 */
export function eventIdFor(drawn: string, event: EventName): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < event.length; i += 1) hash = Math.imul(hash ^ event.charCodeAt(i), 0x01000193);
  const mixed = (Number.parseInt(drawn.slice(0, 8), 16) ^ hash) >>> 0;
  return mixed.toString(16).padStart(8, '0') + drawn.slice(8);
}
