import type { PageMessages } from './messages.js';

const months = (n: number) => (n === 1 ? '1 month' : `${n} months`);

export const en: PageMessages = {
  lang: 'en',
  months,
  neutralBrand: 'Payment update',
  footer: (brand) => `Secure page provided for ${brand} by Recoup`,
  errorTitle: (title) => `Error: ${title}`,

  card: {
    title: 'Update your payment details',
    lead: (brand) => `Enter the card you would like ${brand} to charge from now on.`,
    number: 'Card number',
    expiry: 'Expiry date',
    expiryHint: 'MM/YY',
    cvc: 'Security code',
    cvcHint: '3 or 4 digits',
    checkDetails: 'Please check your card details',
    notAccepted: 'Your card was not accepted',
    save: 'Save card',
    secure: 'Your card details go only to the payment provider and are never stored.',
    errors: {
      number_missing: 'Enter your card number.',
      number_length: 'A card number has 12 to 19 digits.',
      number_invalid: 'This card number is not valid. Check it and try again.',
      expiry_format: 'Enter the expiry date as MM/YY, for example 04/29.',
      expiry_month: 'The expiry month must be between 01 and 12.',
      expired: 'This card has expired. Use a card that is still valid.',
      cvc_format: 'The security code is the 3 or 4 digits on your card.',
    },
    refusals: {
      declined: 'Your bank declined this card. Please use a different card.',
      testCardRequired: 'This is a test account: use a test card such as 4242 4242 4242 4242.',
      other: (code) => `The card could not be saved (${code}). Please try a different card.`,
    },
    label: (brand, last4) => `${brand} card ending in ${last4}`,
    savedTitle: 'Your card has been updated',
    savedLead: (brand, card) => `Thank you. ${brand} will charge your ${card} from now on.`,
    savedRetry:
      'Any payment that is waiting will be retried with this card shortly. You can close this page.',
    backTo: (brand) => `Return to ${brand}`,
    notChanged: 'Your card was not changed',
    leftHostedForm: 'You left the secure card form before saving a card.',
    hostedFormIncomplete: 'The secure card form was not completed.',
    tryAgain: 'Try again',
  },

  cancel: {
    title: 'Before you cancel',
    leadWithOffers: (brand) =>
      `${brand} would like to keep you. Choose an option below, or cancel right away.`,
    leadWithoutOffers: (brand) => `You can keep your ${brand} subscription or cancel it here.`,
    keep: 'Keep my subscription',
    cancelAnyway: 'Cancel anyway',
    chooseOne: 'Please choose one of the options below.',
    offersChanged:
      'The offers have changed since this page was opened. Please choose again from the options below.',
    pause: {
      title: (m) => `Pause for ${m}`,
      text: (m) => `Take a break: no payments for ${m}, then your subscription picks up where it left off.`,
    },
    discount: {
      title: (percent, m) => `${percent}% off for ${m}`,
      text: (percent, m) => `Stay and get ${percent}% off your next ${m}.`,
      textWithPrices: (discounted, price, m) =>
        `Stay and pay ${discounted} instead of ${price} for the next ${m}.`,
      action: (percent) => `Accept ${percent}% off`,
    },
    downgrade: {
      title: (label) => `Switch to ${label}`,
      text: (price, current) =>
        `Keep the essentials for ${price}${current ? ` instead of ${current}` : ''} per billing period.`,
      textWithoutPrice: 'Keep the essentials on a smaller plan.',
    },
    done: {
      cancelled: (brand) => ({
        title: 'Your cancellation has been sent',
        text: `${brand} will confirm that your subscription is cancelled.`,
      }),
      kept: (brand) => ({
        title: 'Glad you are staying',
        text: `Your ${brand} subscription continues as before.`,
      }),
      paused: (brand, m) => ({
        title: 'Your subscription will be paused',
        text: `${brand} will pause it for ${m}.`,
      }),
      discounted: (brand, percent, m) => ({
        title: 'Your discount is on its way',
        text: `${brand} will take ${percent}% off for the next ${m}.`,
      }),
      downgraded: (brand, label) => ({
        title: `You are switching to ${label}`,
        text: `${brand} will move your subscription to ${label}.`,
      }),
    },
    close: 'You can close this page.',
  },

  links: {
    unknown: {
      title: 'This link is not valid',
      text: 'The address may be incomplete. Open the link from your message again, or ask the company that sent it for a new one.',
    },
    used: {
      title: 'This link has already been used',
      text: 'Each link works once, and this one has done its job. There is nothing more to do here.',
      contact: (brand) => `If you need to make another change, contact ${brand} for a new link.`,
    },
    expired: {
      title: 'This link has expired',
      text: 'For your security, links stop working after a while.',
      contact: (brand) => `Contact ${brand} for a new link.`,
    },
    unavailable: {
      title: 'Card updates are not available here yet',
      text: (brand) =>
        `${brand} uses a payment provider whose secure card form cannot be shown on this page yet.`,
      contact: (brand) =>
        `Please contact ${brand} to update your payment details. This link has not been used.`,
    },
    stale: {
      title: 'Please try again',
      text: 'This form has expired or could not be verified. Nothing was changed.',
      reload: 'Reload the page',
    },
    error: {
      title: 'Something went wrong',
      text: 'We could not complete this request. Please try again in a few minutes.',
      contact: (reference) =>
        `If it keeps happening, contact the company that sent you the link and mention reference ${reference}.`,
    },
  },
};
