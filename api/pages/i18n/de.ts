import type { PageMessages } from './messages.js';

/** "1 Monat" / "3 Monate": nominative and accusative alike, so every sentence below uses it that way. */
const months = (n: number) => (n === 1 ? '1 Monat' : `${n} Monate`);
const neutralBrand = 'Zahlungsdaten';

export const de: PageMessages = {
  lang: 'de',
  months,
  neutralBrand,
  footer: (brand) => `Sichere Seite für ${brand}, bereitgestellt von Recoup`,
  errorTitle: (title) => `Fehler: ${title}`,

  card: {
    title: 'Zahlungsdaten aktualisieren',
    lead: (brand) => `Geben Sie die Karte ein, die ${brand} künftig belasten soll.`,
    number: 'Kartennummer',
    expiry: 'Ablaufdatum',
    expiryHint: 'MM/JJ',
    cvc: 'Sicherheitscode',
    cvcHint: '3 oder 4 Ziffern',
    checkDetails: 'Bitte prüfen Sie Ihre Kartendaten',
    notAccepted: 'Ihre Karte wurde nicht akzeptiert',
    save: 'Karte speichern',
    secure:
      'Ihre Kartendaten gehen ausschließlich an den Zahlungsdienstleister und werden nicht gespeichert.',
    errors: {
      number_missing: 'Bitte geben Sie Ihre Kartennummer ein.',
      number_length: 'Eine Kartennummer hat 12 bis 19 Ziffern.',
      number_invalid: 'Diese Kartennummer ist ungültig. Bitte prüfen Sie sie und versuchen Sie es erneut.',
      expiry_format: 'Bitte geben Sie das Ablaufdatum im Format MM/JJ ein, zum Beispiel 04/29.',
      expiry_month: 'Der Monat muss zwischen 01 und 12 liegen.',
      expired: 'Diese Karte ist abgelaufen. Bitte verwenden Sie eine gültige Karte.',
      cvc_format: 'Der Sicherheitscode besteht aus den 3 oder 4 Ziffern auf Ihrer Karte.',
    },
    refusals: {
      declined: 'Ihre Bank hat diese Karte abgelehnt. Bitte verwenden Sie eine andere Karte.',
      testCardRequired:
        'Dies ist ein Testkonto. Bitte verwenden Sie eine Testkarte, zum Beispiel 4242 4242 4242 4242.',
      other: (code) =>
        `Die Karte konnte nicht gespeichert werden (${code}). Bitte versuchen Sie es mit einer anderen Karte.`,
    },
    label: (brand, last4) => `${brand}-Karte mit Endziffern ${last4}`,
    savedTitle: 'Ihre Karte wurde aktualisiert',
    savedLead: (brand, card) => `Vielen Dank. ${brand} belastet ab sofort Ihre ${card}.`,
    savedRetry:
      'Offene Zahlungen werden in Kürze erneut über diese Karte eingezogen. Sie können diese Seite jetzt schließen.',
    backTo: (brand) => `Zurück zu ${brand}`,
    notChanged: 'Ihre Karte wurde nicht geändert',
    leftHostedForm: 'Sie haben das sichere Kartenformular verlassen, bevor eine Karte gespeichert wurde.',
    hostedFormIncomplete: 'Das sichere Kartenformular wurde nicht abgeschlossen.',
    tryAgain: 'Erneut versuchen',
  },

  cancel: {
    title: 'Bevor Sie kündigen',
    leadWithOffers: (brand) =>
      `${brand} würde sich freuen, wenn Sie bleiben. Wählen Sie unten eine Option oder kündigen Sie direkt.`,
    leadWithoutOffers: (brand) => `Sie können Ihr Abonnement bei ${brand} behalten oder hier kündigen.`,
    keep: 'Abonnement behalten',
    cancelAnyway: 'Trotzdem kündigen',
    chooseOne: 'Bitte wählen Sie eine der folgenden Optionen.',
    offersChanged:
      'Die Angebote haben sich geändert, seit diese Seite geöffnet wurde. Bitte wählen Sie erneut eine der folgenden Optionen.',
    pause: {
      title: (m) => `${m} pausieren`,
      text: (m) =>
        `Legen Sie eine Pause ein: ${m} lang keine Zahlungen. Danach läuft Ihr Abonnement einfach weiter.`,
    },
    discount: {
      title: (percent, m) => `${percent} % Rabatt für ${m}`,
      text: (percent, m) => `Bleiben Sie dabei und sparen Sie ${m} lang ${percent} %.`,
      textWithPrices: (discounted, price, m) =>
        `Bleiben Sie dabei und zahlen Sie ${m} lang nur ${discounted} statt ${price}.`,
      action: (percent) => `${percent} % Rabatt annehmen`,
    },
    downgrade: {
      title: (label) => `Zu ${label} wechseln`,
      text: (price, current) =>
        `Behalten Sie das Wichtigste und zahlen Sie ${price}${current ? ` statt ${current}` : ''} pro Abrechnungszeitraum.`,
      textWithoutPrice: 'Behalten Sie das Wichtigste mit einem kleineren Tarif.',
    },
    done: {
      cancelled: (brand) => ({
        title: 'Ihre Kündigung wurde übermittelt',
        text: `${brand} wird Ihnen die Kündigung Ihres Abonnements bestätigen.`,
      }),
      kept: (brand) => ({
        title: 'Schön, dass Sie bleiben',
        text: `Ihr Abonnement bei ${brand} läuft wie gewohnt weiter.`,
      }),
      paused: (brand, m) => ({
        title: 'Ihr Abonnement wird pausiert',
        text: `${brand} pausiert es für ${m}.`,
      }),
      discounted: (brand, percent, m) => ({
        title: 'Ihr Rabatt ist vorgemerkt',
        text: `${brand} gewährt Ihnen ${m} lang ${percent} % Rabatt.`,
      }),
      downgraded: (brand, label) => ({
        title: `Sie wechseln zu ${label}`,
        text: `${brand} stellt Ihr Abonnement auf ${label} um.`,
      }),
    },
    close: 'Sie können diese Seite jetzt schließen.',
  },

  links: {
    unknown: {
      title: 'Dieser Link ist ungültig',
      text: 'Möglicherweise ist die Adresse unvollständig. Öffnen Sie den Link aus Ihrer Nachricht erneut oder bitten Sie das Unternehmen, das ihn Ihnen geschickt hat, um einen neuen.',
    },
    used: {
      title: 'Dieser Link wurde bereits verwendet',
      text: 'Jeder Link funktioniert nur einmal, und dieser hat seinen Zweck erfüllt. Hier ist nichts weiter zu tun.',
      contact: (brand) => `Wenn Sie noch etwas ändern möchten, bitten Sie ${brand} um einen neuen Link.`,
    },
    expired: {
      title: 'Dieser Link ist abgelaufen',
      text: 'Zu Ihrer Sicherheit sind Links nur eine begrenzte Zeit gültig.',
      contact: (brand) => `Bitte fordern Sie bei ${brand} einen neuen Link an.`,
    },
    unavailable: {
      title: 'Kartenänderungen sind hier noch nicht möglich',
      text: (brand) =>
        `${brand} nutzt einen Zahlungsdienstleister, dessen sicheres Kartenformular auf dieser Seite noch nicht angezeigt werden kann.`,
      contact: (brand) =>
        `Bitte wenden Sie sich an ${brand}, um Ihre Zahlungsdaten zu aktualisieren. Dieser Link wurde nicht verwendet.`,
    },
    stale: {
      title: 'Bitte versuchen Sie es erneut',
      text: 'Dieses Formular ist abgelaufen oder konnte nicht überprüft werden. Es wurde nichts geändert.',
      reload: 'Seite neu laden',
    },
    error: {
      title: 'Da ist etwas schiefgelaufen',
      text: 'Ihre Anfrage konnte nicht abgeschlossen werden. Bitte versuchen Sie es in einigen Minuten erneut.',
      contact: (reference) =>
        `Falls das Problem weiterhin besteht, wenden Sie sich an das Unternehmen, von dem Sie den Link erhalten haben, und nennen Sie die Referenz ${reference}.`,
    },
  },
};
