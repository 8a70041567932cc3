import type { CardBrand } from '../../domain/network-rules.js';
import { hash32, Rng } from './random.js';
import type { World } from './world.js';

const day = 86_400_000;

/** A BIN prefix per brand, so the engine reads the brand from the BIN as production does. */
const binOf: Record<Exclude<CardBrand, 'unknown'>, string> = {
  visa: '424242',
  mastercard: '555555',
  amex: '378282',
  discover: '601111',
};

/** One failed renewal: what the merchant knows, plus the latent truth only the world and the oracle see. */
export interface Payment {
  index: number;
  merchant: World['merchants'][number];
  failedAt: number;
  amount: number;
  currency: string;
  /** Card-issuing country and the customer's true UTC offset. */
  country: string;
  offsetMinutes: number;
  brand: Exclude<CardBrand, 'unknown'>;
  bin: string;
  /** The merchant's decline. */
  code: string;
  /** Latent: whether retries of this card can succeed at all. */
  recoverable: boolean;
  /** A second card on file, and its brand. */
  fallbackBrand: Exclude<CardBrand, 'unknown'> | null;
  /** Latent: whether the account updater has a new card should this one turn out expired. */
  updaterHit: boolean;
}

/**
 * The `index`-th failed payment of the world: drawn from its own stream, so payment i is the same whatever
 * the number of payments asked for.
 */
export function drawPayment(world: World, seed: number, index: number): Payment {
  const rng = new Rng(hash32(seed, index, 0x7061_7920));
  const merchants = Object.fromEntries(world.merchants.map((m, i) => [String(i), m.weight]));
  const merchant = world.merchants[Number(rng.pick(merchants))]!;
  const failedAt =
    Math.floor((Date.parse(world.start) + rng.next() * world.arrivalDays * day) / 60_000) * 60_000;
  const countries = Object.fromEntries(Object.entries(world.countries).map(([c, v]) => [c, v.weight]));
  const country = rng.pick(countries);
  const brands = world.brands as Record<Exclude<CardBrand, 'unknown'>, number>;
  const brand = rng.pick(brands);
  const code = rng.pick(Object.fromEntries(Object.entries(world.declines).map(([c, d]) => [c, d.weight])));
  const amount = Math.max(
    50,
    Math.round(merchant.amountMedian * Math.exp(merchant.amountSpread * rng.normal())),
  );
  const recoverable = rng.next() < world.declines[code]!.recoverable;
  const hasFallback = rng.next() < world.fallbackTokenShare;
  const fallbackBrand = rng.pick(brands);
  const updaterHit = rng.next() < (world.accountUpdater?.hitRate ?? 0);
  return {
    index,
    merchant,
    failedAt,
    amount,
    currency: merchant.currency,
    country,
    offsetMinutes: Math.round(world.countries[country]!.utcOffsetHours * 60),
    brand,
    bin: binOf[brand],
    code,
    recoverable,
    fallbackBrand: hasFallback ? fallbackBrand : null,
    updaterHit,
  };
}

/** The first `count` payments of the world. */
export function drawPayments(world: World, seed: number, count: number): Payment[] {
  return Array.from({ length: count }, (_, i) => drawPayment(world, seed, i));
}
