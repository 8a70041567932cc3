import type { PageMessages } from './messages.js';

const months = (n: number) => (n === 1 ? '1 mois' : `${n} mois`);
/** A percentage the French way, with a narrow no-break space before the sign. */
const pct = (percent: number) => `${percent}\u202f%`;

export const fr: PageMessages = {
  lang: 'fr',
  months,
  neutralBrand: 'Mise à jour du paiement',
  footer: (brand) => `Page sécurisée fournie par Recoup pour ${brand}`,
  errorTitle: (title) => `Erreur\u202f: ${title}`,

  card: {
    title: 'Mettez à jour vos informations de paiement',
    lead: (brand) => `Saisissez la carte que ${brand} débitera désormais.`,
    number: 'Numéro de carte',
    expiry: 'Date d’expiration',
    expiryHint: 'MM/AA',
    cvc: 'Code de sécurité',
    cvcHint: '3 ou 4 chiffres',
    checkDetails: 'Veuillez vérifier les informations de votre carte',
    notAccepted: 'Votre carte n’a pas été acceptée',
    save: 'Enregistrer la carte',
    secure:
      'Les informations de votre carte sont transmises uniquement au prestataire de paiement et ne sont jamais conservées.',
    errors: {
      number_missing: 'Saisissez le numéro de votre carte.',
      number_length: 'Un numéro de carte comporte de 12 à 19 chiffres.',
      number_invalid: 'Ce numéro de carte n’est pas valide. Vérifiez-le et réessayez.',
      expiry_format: 'Saisissez la date d’expiration au format MM/AA, par exemple 04/29.',
      expiry_month: 'Le mois d’expiration doit être compris entre 01 et 12.',
      expired: 'Cette carte a expiré. Utilisez une carte encore valide.',
      cvc_format: 'Le code de sécurité correspond aux 3 ou 4 chiffres indiqués sur votre carte.',
    },
    refusals: {
      declined: 'Votre banque a refusé cette carte. Veuillez utiliser une autre carte.',
      testCardRequired:
        'Ceci est un compte de test\u202f: utilisez une carte de test, par exemple 4242 4242 4242 4242.',
      other: (code) => `La carte n’a pas pu être enregistrée (${code}). Veuillez essayer une autre carte.`,
    },
    label: (brand, last4) => `carte ${brand} se terminant par ${last4}`,
    savedTitle: 'Votre carte a été mise à jour',
    savedLead: (brand, card) => `Merci. ${brand} débitera désormais votre ${card}.`,
    savedRetry:
      'Les paiements en attente seront prochainement présentés de nouveau sur cette carte. Vous pouvez fermer cette page.',
    backTo: (brand) => `Retour vers ${brand}`,
    notChanged: 'Votre carte n’a pas été modifiée',
    leftHostedForm: 'Vous avez quitté le formulaire sécurisé avant d’enregistrer une carte.',
    hostedFormIncomplete: 'Le formulaire de carte sécurisé n’a pas été rempli jusqu’au bout.',
    tryAgain: 'Réessayer',
  },

  cancel: {
    title: 'Avant de résilier',
    leadWithOffers: (brand) =>
      `${brand} aimerait vous garder. Choisissez une option ci-dessous ou résiliez dès maintenant.`,
    leadWithoutOffers: (brand) => `Vous pouvez conserver votre abonnement ${brand} ou le résilier ici.`,
    keep: 'Conserver mon abonnement',
    cancelAnyway: 'Résilier quand même',
    chooseOne: 'Veuillez choisir l’une des options ci-dessous.',
    offersChanged:
      'Les offres ont changé depuis l’ouverture de cette page. Veuillez choisir à nouveau l’une des options ci-dessous.',
    pause: {
      title: (m) => `Faire une pause de ${m}`,
      text: (m) =>
        `Soufflez un peu\u202f: aucun paiement pendant ${m}, puis votre abonnement reprend là où il s’était arrêté.`,
    },
    discount: {
      title: (percent, m) => `${pct(percent)} de réduction pendant ${m}`,
      text: (percent, m) => `Restez et bénéficiez de ${pct(percent)} de réduction pendant ${m}.`,
      textWithPrices: (discounted, price, m) =>
        `Restez et payez ${discounted} au lieu de ${price} pendant ${m}.`,
      action: (percent) => `Accepter la réduction de ${pct(percent)}`,
    },
    downgrade: {
      title: (label) => `Passer à ${label}`,
      text: (price, current) =>
        `Gardez l’essentiel pour ${price}${current ? ` au lieu de ${current}` : ''} par période de facturation.`,
      textWithoutPrice: 'Gardez l’essentiel avec une formule plus légère.',
    },
    done: {
      cancelled: (brand) => ({
        title: 'Votre demande de résiliation a été envoyée',
        text: `${brand} vous confirmera la résiliation de votre abonnement.`,
      }),
      kept: (brand) => ({
        title: 'Merci de rester avec nous',
        text: `Votre abonnement ${brand} se poursuit sans changement.`,
      }),
      paused: (brand, m) => ({
        title: 'Votre abonnement va être mis en pause',
        text: `${brand} le suspendra pendant ${m}.`,
      }),
      discounted: (brand, percent, m) => ({
        title: 'Votre réduction va être appliquée',
        text: `${brand} appliquera une réduction de ${pct(percent)} pendant ${m}.`,
      }),
      downgraded: (brand, label) => ({
        title: `Vous passez à ${label}`,
        text: `${brand} va faire passer votre abonnement à ${label}.`,
      }),
    },
    close: 'Vous pouvez fermer cette page.',
  },

  links: {
    unknown: {
      title: 'Ce lien n’est pas valide',
      text: 'L’adresse est peut-être incomplète. Rouvrez le lien depuis votre message, ou demandez-en un nouveau à l’entreprise qui vous l’a envoyé.',
    },
    used: {
      title: 'Ce lien a déjà été utilisé',
      text: 'Chaque lien ne sert qu’une seule fois, et celui-ci a déjà rempli son rôle. Vous n’avez plus rien à faire ici.',
      contact: (brand) =>
        `Si vous souhaitez effectuer une autre modification, contactez ${brand} pour obtenir un nouveau lien.`,
    },
    expired: {
      title: 'Ce lien a expiré',
      text: 'Pour votre sécurité, les liens cessent de fonctionner au bout d’un certain temps.',
      contact: (brand) => `Contactez ${brand} pour obtenir un nouveau lien.`,
    },
    unavailable: {
      title: 'La mise à jour de carte n’est pas encore disponible ici',
      text: (brand) =>
        `${brand} utilise un prestataire de paiement dont le formulaire de carte sécurisé ne peut pas encore s’afficher sur cette page.`,
      contact: (brand) =>
        `Veuillez contacter ${brand} pour mettre à jour vos informations de paiement. Ce lien n’a pas été utilisé.`,
    },
    stale: {
      title: 'Veuillez réessayer',
      text: 'Ce formulaire a expiré ou n’a pas pu être vérifié. Aucune modification n’a été effectuée.',
      reload: 'Recharger la page',
    },
    error: {
      title: 'Une erreur s’est produite',
      text: 'Nous n’avons pas pu traiter votre demande. Veuillez réessayer dans quelques minutes.',
      contact: (reference) =>
        `Si le problème persiste, contactez l’entreprise qui vous a envoyé ce lien en indiquant la référence ${reference}.`,
    },
  },
};
