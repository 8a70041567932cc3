import type { CardInputError } from '../../../domain/card-input.js';

/** A pair of a page's heading and its lead sentence. */
export interface Notice {
  title: string;
  text: string;
}

/**
 * Every word the hosted pages show, in one language. Each language implements all of it, so the compiler
 * refuses a catalogue with a sentence missing. Functions take what a sentence interpolates: brand names,
 * offer labels and prices already formatted for the language (plain text; the pages escape it).
 */
export interface PageMessages {
  /** BCP 47 tag for `<html lang>` and for formatting amounts (`Intl.NumberFormat`). */
  lang: string;
  /** "3 months". */
  months: (n: number) => string;
  /** The name on pages that belong to no account (an unknown link). */
  neutralBrand: string;
  footer: (brand: string) => string;
  /** The title of a page showing errors, so they are heard first (WCAG 2.4.2, 3.3.1). */
  errorTitle: (title: string) => string;

  card: {
    title: string;
    lead: (brand: string) => string;
    number: string;
    expiry: string;
    expiryHint: string;
    cvc: string;
    cvcHint: string;
    checkDetails: string;
    notAccepted: string;
    save: string;
    secure: string;
    errors: Record<CardInputError, string>;
    refusals: { declined: string; testCardRequired: string; other: (code: string) => string };
    /** "Visa card ending in 4242"; `brand` capitalised already (Visa, Mastercard, Amex). */
    label: (brand: string, last4: string) => string;
    savedTitle: string;
    savedLead: (brand: string, card: string) => string;
    savedRetry: string;
    backTo: (brand: string) => string;
    notChanged: string;
    leftHostedForm: string;
    hostedFormIncomplete: string;
    tryAgain: string;
  };

  cancel: {
    title: string;
    leadWithOffers: (brand: string) => string;
    leadWithoutOffers: (brand: string) => string;
    keep: string;
    cancelAnyway: string;
    chooseOne: string;
    /** The offer chosen is no longer the one at its place: the page shows the current offers. */
    offersChanged: string;
    pause: { title: (months: string) => string; text: (months: string) => string };
    discount: {
      title: (percent: number, months: string) => string;
      text: (percent: number, months: string) => string;
      /** With the subscription's price known: what the customer pays instead. */
      textWithPrices: (discounted: string, price: string, months: string) => string;
      action: (percent: number) => string;
    };
    downgrade: {
      title: (label: string) => string;
      /** `price` of the smaller plan, `current` the subscription's price when known. */
      text: (price: string, current: string | null) => string;
      /** When the smaller plan's price cannot be shown (not known in the link's currency). */
      textWithoutPrice: string;
    };
    done: {
      cancelled: (brand: string) => Notice;
      kept: (brand: string) => Notice;
      paused: (brand: string, months: string) => Notice;
      discounted: (brand: string, percent: number, months: string) => Notice;
      downgraded: (brand: string, label: string) => Notice;
    };
    close: string;
  };

  links: {
    unknown: Notice;
    used: Notice & { contact: (brand: string) => string };
    expired: Notice & { contact: (brand: string) => string };
    unavailable: { title: string; text: (brand: string) => string; contact: (brand: string) => string };
    stale: Notice & { reload: string };
    /** Shown without an account's brand: the failure may have come before the link was read. */
    error: Notice & { contact: (reference: string) => string };
  };
}
