import type { PageMessages } from './messages.js';

/** "1 maand" / "3 maanden": the sentences below use it as a duration ("3 maanden lang"). */
const months = (n: number) => (n === 1 ? '1 maand' : `${n} maanden`);

export const nl: PageMessages = {
  lang: 'nl',
  months,
  neutralBrand: 'Betaalgegevens',
  footer: (brand) => `Beveiligde pagina voor ${brand}, aangeboden door Recoup`,
  errorTitle: (title) => `Fout: ${title}`,

  card: {
    title: 'Betaalgegevens bijwerken',
    lead: (brand) => `Vul de gegevens in van de kaart waarvan ${brand} voortaan mag afschrijven.`,
    number: 'Kaartnummer',
    expiry: 'Vervaldatum',
    expiryHint: 'MM/JJ',
    cvc: 'Beveiligingscode',
    cvcHint: '3 of 4 cijfers',
    checkDetails: 'Controleer uw kaartgegevens',
    notAccepted: 'Uw kaart is niet geaccepteerd',
    save: 'Kaart opslaan',
    secure: 'Uw kaartgegevens gaan alleen naar de betaaldienstverlener en worden nooit opgeslagen.',
    errors: {
      number_missing: 'Vul uw kaartnummer in.',
      number_length: 'Een kaartnummer bestaat uit 12 tot en met 19 cijfers.',
      number_invalid: 'Dit kaartnummer is ongeldig. Controleer het en probeer het opnieuw.',
      expiry_format: 'Vul de vervaldatum in als MM/JJ, bijvoorbeeld 04/29.',
      expiry_month: 'De maand van de vervaldatum moet tussen 01 en 12 liggen.',
      expired: 'Deze kaart is verlopen. Gebruik een kaart die nog geldig is.',
      cvc_format: 'De beveiligingscode bestaat uit de 3 of 4 cijfers op uw kaart.',
    },
    refusals: {
      declined: 'Uw bank heeft deze kaart geweigerd. Gebruik een andere kaart.',
      testCardRequired: 'Dit is een testaccount. Gebruik een testkaart, bijvoorbeeld 4242 4242 4242 4242.',
      other: (code) => `De kaart kon niet worden opgeslagen (${code}). Probeer het met een andere kaart.`,
    },
    label: (brand, last4) => `${brand}-kaart eindigend op ${last4}`,
    savedTitle: 'Uw kaart is bijgewerkt',
    savedLead: (brand, card) => `Bedankt. ${brand} schrijft voortaan af van uw ${card}.`,
    savedRetry:
      'Openstaande betalingen worden binnenkort opnieuw van deze kaart afgeschreven. U kunt deze pagina nu sluiten.',
    backTo: (brand) => `Terug naar ${brand}`,
    notChanged: 'Uw kaart is niet gewijzigd',
    leftHostedForm: 'U heeft het beveiligde kaartformulier verlaten voordat er een kaart was opgeslagen.',
    hostedFormIncomplete: 'Het beveiligde kaartformulier is niet afgerond.',
    tryAgain: 'Opnieuw proberen',
  },

  cancel: {
    title: 'Voordat u opzegt',
    leadWithOffers: (brand) =>
      `${brand} houdt u graag als klant. Kies hieronder een optie, of zeg direct op.`,
    leadWithoutOffers: (brand) => `U kunt uw abonnement bij ${brand} voortzetten of hier opzeggen.`,
    keep: 'Abonnement behouden',
    cancelAnyway: 'Toch opzeggen',
    chooseOne: 'Kies een van de opties hieronder.',
    offersChanged:
      'De aanbiedingen zijn gewijzigd sinds deze pagina werd geopend. Kies opnieuw een van de opties hieronder.',
    pause: {
      title: (m) => `${m} pauzeren`,
      text: (m) =>
        `Neem even pauze: ${m} lang geen betalingen. Daarna gaat uw abonnement verder waar het gebleven was.`,
    },
    discount: {
      title: (percent, m) => `${m} lang ${percent}% korting`,
      text: (percent, m) => `Blijf klant en krijg ${m} lang ${percent}% korting.`,
      textWithPrices: (discounted, price, m) =>
        `Blijf klant en betaal ${m} lang ${discounted} in plaats van ${price}.`,
      action: (percent) => `${percent}% korting accepteren`,
    },
    downgrade: {
      title: (label) => `Overstappen naar ${label}`,
      text: (price, current) =>
        `Houd het belangrijkste en betaal ${price}${current ? ` in plaats van ${current}` : ''} per factuurperiode.`,
      textWithoutPrice: 'Houd het belangrijkste met een kleiner abonnement.',
    },
    done: {
      cancelled: (brand) => ({
        title: 'Uw opzegging is verstuurd',
        text: `${brand} bevestigt de opzegging van uw abonnement.`,
      }),
      kept: (brand) => ({
        title: 'Fijn dat u blijft',
        text: `Uw abonnement bij ${brand} loopt gewoon door.`,
      }),
      paused: (brand, m) => ({
        title: 'Uw abonnement wordt gepauzeerd',
        text: `${brand} pauzeert het ${m} lang.`,
      }),
      discounted: (brand, percent, m) => ({
        title: 'Uw korting wordt verwerkt',
        text: `${brand} geeft u ${m} lang ${percent}% korting.`,
      }),
      downgraded: (brand, label) => ({
        title: `U stapt over naar ${label}`,
        text: `${brand} zet uw abonnement om naar ${label}.`,
      }),
    },
    close: 'U kunt deze pagina nu sluiten.',
  },

  links: {
    unknown: {
      title: 'Deze link is ongeldig',
      text: 'Mogelijk is het adres onvolledig. Open de link opnieuw vanuit uw bericht, of vraag het bedrijf dat hem heeft gestuurd om een nieuwe.',
    },
    used: {
      title: 'Deze link is al gebruikt',
      text: 'Elke link werkt maar één keer, en deze heeft zijn werk gedaan. U hoeft hier niets meer te doen.',
      contact: (brand) => `Wilt u nog iets wijzigen? Vraag ${brand} dan om een nieuwe link.`,
    },
    expired: {
      title: 'Deze link is verlopen',
      text: 'Voor uw veiligheid werken links maar een beperkte tijd.',
      contact: (brand) => `Vraag ${brand} om een nieuwe link.`,
    },
    unavailable: {
      title: 'Kaartgegevens wijzigen kan hier nog niet',
      text: (brand) =>
        `${brand} gebruikt een betaaldienstverlener waarvan het beveiligde kaartformulier nog niet op deze pagina kan worden getoond.`,
      contact: (brand) =>
        `Neem contact op met ${brand} om uw betaalgegevens bij te werken. Deze link is niet gebruikt.`,
    },
    stale: {
      title: 'Probeer het opnieuw',
      text: 'Dit formulier is verlopen of kon niet worden gecontroleerd. Er is niets gewijzigd.',
      reload: 'Pagina opnieuw laden',
    },
    error: {
      title: 'Er is iets misgegaan',
      text: 'We konden uw verzoek niet afronden. Probeer het over een paar minuten opnieuw.',
      contact: (reference) =>
        `Blijft dit gebeuren? Neem dan contact op met het bedrijf dat u de link heeft gestuurd en vermeld referentie ${reference}.`,
    },
  },
};
