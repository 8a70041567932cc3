/** Calendar facts of an instant in some local time; computed with a fixed UTC offset for speed. */
export interface LocalParts {
  hour: number; // 0-23
  dayOfMonth: number; // 1-31
  weekday: number; // 0 = Monday … 6 = Sunday
  daysInMonth: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The UTC offset of `timeZone` at `epochMs`, in minutes (e.g. +60 for Europe/Berlin in winter). */
export function utcOffsetMinutes(timeZone: string, epochMs: number): number {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  const p = Object.fromEntries(f.formatToParts(new Date(epochMs)).map((x) => [x.type, Number(x.value)]));
  const asUtc = Date.UTC(p.year ?? 1970, (p.month ?? 1) - 1, p.day ?? 1, p.hour ?? 0, p.minute ?? 0);
  return Math.round((asUtc - Math.floor(epochMs / 60_000) * 60_000) / 60_000);
}

const dayMs = 86_400_000;

/** A change of a time zone's UTC offset (daylight saving's start or end): from `at` (epoch ms) on. */
export interface OffsetChange {
  at: number;
  offsetMinutes: number;
}

/**
 * The changes of `timeZone`'s UTC offset after `from` up to `to`, in time order, each at the minute it
 * happens: looked for day by day (no zone changes twice in a day), then narrowed down by halves.
 */
export function offsetChanges(timeZone: string, from: number, to: number): OffsetChange[] {
  const changes: OffsetChange[] = [];
  let offset = utcOffsetMinutes(timeZone, from);
  for (let start = Math.floor(from / 60_000); start * 60_000 < to; start += dayMs / 60_000) {
    const end = start + dayMs / 60_000;
    const after = utcOffsetMinutes(timeZone, end * 60_000);
    if (after === offset) continue;
    // The offset is `offset` at minute `lo` and `after` at minute `hi`: the change is at the first minute of it.
    let [lo, hi] = [start, end];
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (utcOffsetMinutes(timeZone, mid * 60_000) === offset) lo = mid;
      else hi = mid;
    }
    if (hi * 60_000 <= to) changes.push({ at: hi * 60_000, offsetMinutes: after });
    offset = after;
  }
  return changes;
}

/** The UTC offset at `epochMs`: `offsetMinutes` (the offset at intake) or that of the last change due by then. */
export function offsetAt(
  epochMs: number,
  offsetMinutes: number,
  changes: readonly OffsetChange[] = [],
): number {
  let offset = offsetMinutes;
  for (const change of changes) {
    if (change.at > epochMs) break;
    offset = change.offsetMinutes;
  }
  return offset;
}

/**
 * The customer's clock as a recovery plans with it: the offset of `timeZone` at `now`, and its changes
 * until the longest the recovery may run (`maxDays`, and a day) is over.
 */
export function customerClock(
  timeZone: string,
  now: number,
  maxDays: number,
): { offsetMinutes: number; offsetChanges: OffsetChange[] } {
  return {
    offsetMinutes: utcOffsetMinutes(timeZone, now),
    offsetChanges: offsetChanges(timeZone, now, now + (maxDays + 1) * dayMs),
  };
}

/** Calendar facts per day number (days since 1970-01-01): the planner asks for the same days many times. */
const calendar = new Map<number, Omit<LocalParts, 'hour'>>();

/** Local calendar parts of `epochMs` for a fixed offset in minutes. */
export function localParts(epochMs: number, offsetMinutes: number): LocalParts {
  const local = epochMs + offsetMinutes * 60_000;
  const dayNo = Math.floor(local / dayMs);
  let date = calendar.get(dayNo);
  if (!date) {
    const d = new Date(dayNo * dayMs);
    date = {
      dayOfMonth: d.getUTCDate(),
      weekday: (d.getUTCDay() + 6) % 7,
      daysInMonth: new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate(),
    };
    if (calendar.size >= 4096) calendar.clear();
    calendar.set(dayNo, date);
  }
  return {
    hour: Math.floor((local - dayNo * dayMs) / 3_600_000),
    dayOfMonth: date.dayOfMonth,
    weekday: date.weekday,
    daysInMonth: date.daysInMonth,
  };
}

/** The last Monday–Friday day of the month of `parts`. */
export function lastBusinessDay(parts: LocalParts): number {
  const lastWeekday = (parts.weekday + (parts.daysInMonth - parts.dayOfMonth)) % 7;
  return parts.daysInMonth - (lastWeekday === 5 ? 1 : lastWeekday === 6 ? 2 : 0);
}

/** A representative time zone per card-issuing country: the customer's local clock for timing. */
const countryZones: Record<string, string> = {
  US: 'America/Chicago',
  CA: 'America/Toronto',
  MX: 'America/Mexico_City',
  BR: 'America/Sao_Paulo',
  AR: 'America/Argentina/Buenos_Aires',
  CL: 'America/Santiago',
  CO: 'America/Bogota',
  PE: 'America/Lima',
  GB: 'Europe/London',
  IE: 'Europe/Dublin',
  FR: 'Europe/Paris',
  DE: 'Europe/Berlin',
  NL: 'Europe/Amsterdam',
  BE: 'Europe/Brussels',
  LU: 'Europe/Luxembourg',
  ES: 'Europe/Madrid',
  PT: 'Europe/Lisbon',
  IT: 'Europe/Rome',
  CH: 'Europe/Zurich',
  AT: 'Europe/Vienna',
  SE: 'Europe/Stockholm',
  NO: 'Europe/Oslo',
  DK: 'Europe/Copenhagen',
  FI: 'Europe/Helsinki',
  PL: 'Europe/Warsaw',
  CZ: 'Europe/Prague',
  SK: 'Europe/Bratislava',
  HU: 'Europe/Budapest',
  RO: 'Europe/Bucharest',
  BG: 'Europe/Sofia',
  GR: 'Europe/Athens',
  HR: 'Europe/Zagreb',
  SI: 'Europe/Ljubljana',
  EE: 'Europe/Tallinn',
  LV: 'Europe/Riga',
  LT: 'Europe/Vilnius',
  CY: 'Asia/Nicosia',
  MT: 'Europe/Malta',
  IS: 'Atlantic/Reykjavik',
  TR: 'Europe/Istanbul',
  UA: 'Europe/Kyiv',
  IL: 'Asia/Jerusalem',
  AE: 'Asia/Dubai',
  SA: 'Asia/Riyadh',
  EG: 'Africa/Cairo',
  ZA: 'Africa/Johannesburg',
  NG: 'Africa/Lagos',
  KE: 'Africa/Nairobi',
  IN: 'Asia/Kolkata',
  PK: 'Asia/Karachi',
  BD: 'Asia/Dhaka',
  SG: 'Asia/Singapore',
  MY: 'Asia/Kuala_Lumpur',
  TH: 'Asia/Bangkok',
  VN: 'Asia/Ho_Chi_Minh',
  ID: 'Asia/Jakarta',
  PH: 'Asia/Manila',
  CN: 'Asia/Shanghai',
  HK: 'Asia/Hong_Kong',
  TW: 'Asia/Taipei',
  JP: 'Asia/Tokyo',
  KR: 'Asia/Seoul',
  AU: 'Australia/Sydney',
  NZ: 'Pacific/Auckland',
};

/** EEA + UK + CH: issuers that soft-decline for Strong Customer Authentication. */
export const scaCountries: ReadonlySet<string> = new Set(
  'AT BE BG HR CY CZ DK EE FI FR DE GR HU IE IT LV LT LU MT NL PL PT RO SK SI ES SE IS LI NO GB CH'.split(
    ' ',
  ),
);

/** The customer's time zone: the issuing country's, else the account's. */
export function customerTimeZone(cardOrigin: string | undefined, accountTimeZone: string): string {
  return (cardOrigin && countryZones[cardOrigin]) || accountTimeZone;
}
