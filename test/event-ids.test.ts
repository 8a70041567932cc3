import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { eventIdFor } from '../domain/event-ids.js';
import { eventNames } from '../domain/events.js';

const uuid4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('eventIdFor', () => {
  it('gives the same drawn uuid the same id for the same event: a retaken step publishes it once', () => {
    const drawn = randomUUID();
    expect(eventIdFor(drawn, 'recovery.failed')).toBe(eventIdFor(drawn, 'recovery.failed'));
  });

  it('gives every event an id of its own for one drawn uuid, still a version-4 UUID differing only in its first 32 bits', () => {
    for (const drawn of [
      randomUUID(),
      '00000000-0000-4000-8000-000000000000',
      'ffffffff-ffff-4fff-bfff-ffffffffffff',
    ]) {
      const ids = eventNames.map((name) => eventIdFor(drawn, name));
      expect(new Set(ids).size).toBe(eventNames.length);
      for (const id of ids) {
        expect(id).toMatch(uuid4);
        expect(id.slice(8)).toBe(drawn.slice(8));
      }
    }
  });
});
