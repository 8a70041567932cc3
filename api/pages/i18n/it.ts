import type { PageMessages } from './messages.js';

const months = (n: number) => (n === 1 ? '1 mese' : `${n} mesi`);
/**
 * "del 20%" but "dell’8%": the article elides before numbers read with a vowel
 * (uno, otto, undici, ottanta…), so percentages in running text go through here.
 */
const delPct = (percent: number) =>
  /^(1|8|11|8\d)$/.test(String(percent)) ? `dell’${percent}%` : `del ${percent}%`;

export const it: PageMessages = {
  lang: 'it',
  months,
  neutralBrand: 'Aggiornamento pagamento',
  footer: (brand) => `Pagina sicura fornita da Recoup per ${brand}`,
  errorTitle: (title) => `Errore: ${title}`,

  card: {
    title: 'Aggiorni i dati di pagamento',
    lead: (brand) => `Inserisca la carta su cui ${brand} effettuerà gli addebiti d’ora in poi.`,
    number: 'Numero della carta',
    expiry: 'Data di scadenza',
    expiryHint: 'MM/AA',
    cvc: 'Codice di sicurezza',
    cvcHint: '3 o 4 cifre',
    checkDetails: 'Controlli i dati della carta',
    notAccepted: 'La carta non è stata accettata',
    save: 'Salva la carta',
    secure:
      'I dati della carta vengono trasmessi solo al gestore dei pagamenti e non vengono mai memorizzati.',
    errors: {
      number_missing: 'Inserisca il numero della carta.',
      number_length: 'Il numero della carta è composto da 12 a 19 cifre.',
      number_invalid: 'Il numero della carta non è valido. Lo controlli e riprovi.',
      expiry_format: 'Inserisca la data di scadenza nel formato MM/AA, ad esempio 04/29.',
      expiry_month: 'Il mese di scadenza deve essere compreso tra 01 e 12.',
      expired: 'Questa carta è scaduta. Utilizzi una carta ancora valida.',
      cvc_format: 'Il codice di sicurezza è composto dalle 3 o 4 cifre riportate sulla carta.',
    },
    refusals: {
      declined: 'La banca ha rifiutato questa carta. Utilizzi un’altra carta.',
      testCardRequired:
        'Questo è un account di prova: utilizzi una carta di prova, ad esempio 4242 4242 4242 4242.',
      other: (code) => `Non è stato possibile salvare la carta (${code}). Provi con un’altra carta.`,
    },
    label: (brand, last4) => `carta ${brand} che termina con ${last4}`,
    savedTitle: 'La carta è stata aggiornata',
    savedLead: (brand, card) => `Grazie. D’ora in poi ${brand} effettuerà gli addebiti sulla ${card}.`,
    savedRetry:
      'Per gli eventuali pagamenti in sospeso verrà effettuato a breve un nuovo tentativo su questa carta. Ora può chiudere questa pagina.',
    backTo: (brand) => `Torna a ${brand}`,
    notChanged: 'La carta non è stata modificata',
    leftHostedForm: 'Ha lasciato il modulo sicuro prima di salvare la carta.',
    hostedFormIncomplete: 'Il modulo sicuro per la carta non è stato completato.',
    tryAgain: 'Riprova',
  },

  cancel: {
    title: 'Prima di disdire l’abbonamento',
    leadWithOffers: (brand) =>
      `${brand} non vorrebbe perderla. Scelga una delle opzioni qui sotto oppure disdica subito.`,
    leadWithoutOffers: (brand) => `Può mantenere l’abbonamento a ${brand} oppure disdirlo qui.`,
    keep: 'Mantieni l’abbonamento',
    cancelAnyway: 'Disdici comunque',
    chooseOne: 'Scelga una delle opzioni qui sotto.',
    offersChanged:
      'Le offerte sono cambiate da quando è stata aperta questa pagina. Scelga di nuovo una delle opzioni qui sotto.',
    pause: {
      title: (m) => `Pausa di ${m}`,
      text: (m) =>
        `Si prenda una pausa: nessun pagamento per ${m}, poi l’abbonamento riprende da dove si era interrotto.`,
    },
    discount: {
      title: (percent, m) => `${percent}% di sconto per ${m}`,
      text: (percent, m) => `Resti con noi e avrà uno sconto ${delPct(percent)} per ${m}.`,
      textWithPrices: (discounted, price, m) =>
        `Resti con noi e per ${m} pagherà ${discounted} invece di ${price}.`,
      action: (percent) => `Accetta lo sconto ${delPct(percent)}`,
    },
    downgrade: {
      title: (label) => `Passa a ${label}`,
      text: (price, current) =>
        `Mantenga l’essenziale e paghi ${price}${current ? ` invece di ${current}` : ''} per ogni periodo di fatturazione.`,
      textWithoutPrice: 'Mantenga l’essenziale con un piano più leggero.',
    },
    done: {
      cancelled: (brand) => ({
        title: 'La richiesta di disdetta è stata inviata',
        text: `${brand} le confermerà la disdetta dell’abbonamento.`,
      }),
      kept: (brand) => ({
        title: 'Siamo lieti che abbia deciso di restare',
        text: `L’abbonamento a ${brand} continua come prima.`,
      }),
      paused: (brand, m) => ({
        title: 'L’abbonamento verrà messo in pausa',
        text: `${brand} lo sospenderà per ${m}.`,
      }),
      discounted: (brand, percent, m) => ({
        title: 'Lo sconto è in arrivo',
        text: `${brand} applicherà uno sconto ${delPct(percent)} per ${m}.`,
      }),
      downgraded: (brand, label) => ({
        title: `Passaggio a ${label} in corso`,
        text: `${brand} passerà il suo abbonamento a ${label}.`,
      }),
    },
    close: 'Ora può chiudere questa pagina.',
  },

  links: {
    unknown: {
      title: 'Questo link non è valido',
      text: 'L’indirizzo potrebbe essere incompleto. Apra di nuovo il link dal messaggio ricevuto oppure ne chieda uno nuovo all’azienda che glielo ha inviato.',
    },
    used: {
      title: 'Questo link è già stato utilizzato',
      text: 'Ogni link si può usare una sola volta e questo ha già svolto la sua funzione. Non serve fare altro.',
      contact: (brand) => `Se desidera apportare un’altra modifica, chieda un nuovo link a ${brand}.`,
    },
    expired: {
      title: 'Questo link è scaduto',
      text: 'Per motivi di sicurezza, i link smettono di funzionare dopo un certo periodo.',
      contact: (brand) => `Contatti ${brand} per ricevere un nuovo link.`,
    },
    unavailable: {
      title: 'L’aggiornamento della carta non è ancora disponibile qui',
      text: (brand) =>
        `${brand} utilizza un gestore dei pagamenti il cui modulo sicuro per la carta non può ancora essere mostrato in questa pagina.`,
      contact: (brand) =>
        `Contatti ${brand} per aggiornare i dati di pagamento. Questo link non è stato utilizzato.`,
    },
    stale: {
      title: 'La preghiamo di riprovare',
      text: 'Questo modulo è scaduto o non è stato possibile verificarlo. Non è stata apportata alcuna modifica.',
      reload: 'Ricarica la pagina',
    },
    error: {
      title: 'Si è verificato un problema',
      text: 'Non è stato possibile completare la richiesta. Riprovi tra qualche minuto.',
      contact: (reference) =>
        `Se il problema persiste, contatti l’azienda che le ha inviato il link e indichi il codice di riferimento ${reference}.`,
    },
  },
};
