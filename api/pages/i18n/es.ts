import type { PageMessages } from './messages.js';

const months = (n: number) => (n === 1 ? '1 mes' : `${n} meses`);

export const es: PageMessages = {
  lang: 'es',
  months,
  neutralBrand: 'Actualización de pago',
  footer: (brand) => `Página segura ofrecida por Recoup para ${brand}`,
  errorTitle: (title) => `Error: ${title}`,

  card: {
    title: 'Actualice sus datos de pago',
    lead: (brand) =>
      `Introduzca la tarjeta en la que desea que ${brand} realice los cobros a partir de ahora.`,
    number: 'Número de tarjeta',
    expiry: 'Fecha de vencimiento',
    expiryHint: 'MM/AA',
    cvc: 'Código de seguridad',
    cvcHint: '3 o 4 dígitos',
    checkDetails: 'Revise los datos de su tarjeta',
    notAccepted: 'No se aceptó su tarjeta',
    save: 'Guardar tarjeta',
    secure: 'Los datos de su tarjeta solo se envían al proveedor de pagos y nunca se almacenan.',
    errors: {
      number_missing: 'Introduzca el número de su tarjeta.',
      number_length: 'El número de tarjeta debe tener entre 12 y 19 dígitos.',
      number_invalid: 'Este número de tarjeta no es válido. Revíselo e inténtelo de nuevo.',
      expiry_format: 'Introduzca la fecha de vencimiento con el formato MM/AA, por ejemplo, 04/29.',
      expiry_month: 'El mes de vencimiento debe estar entre 01 y 12.',
      expired: 'Esta tarjeta está vencida. Use una tarjeta vigente.',
      cvc_format: 'El código de seguridad son los 3 o 4 dígitos que figuran en su tarjeta.',
    },
    refusals: {
      declined: 'Su banco rechazó esta tarjeta. Por favor, use otra.',
      testCardRequired:
        'Esta es una cuenta de prueba: use una tarjeta de prueba, como la 4242 4242 4242 4242.',
      other: (code) => `No se pudo guardar la tarjeta (${code}). Por favor, pruebe con otra.`,
    },
    label: (brand, last4) => `tarjeta ${brand} terminada en ${last4}`,
    savedTitle: 'Su tarjeta se ha actualizado',
    savedLead: (brand, card) => `Gracias. A partir de ahora, ${brand} realizará los cobros en su ${card}.`,
    savedRetry:
      'Los pagos pendientes se volverán a intentar en breve con esta tarjeta. Ya puede cerrar esta página.',
    backTo: (brand) => `Volver a ${brand}`,
    notChanged: 'Su tarjeta no se ha cambiado',
    leftHostedForm: 'Salió del formulario seguro antes de guardar una tarjeta.',
    hostedFormIncomplete: 'No se completó el formulario seguro de la tarjeta.',
    tryAgain: 'Volver a intentarlo',
  },

  cancel: {
    title: 'Antes de cancelar',
    leadWithOffers: (brand) =>
      `A ${brand} le gustaría seguir contando con usted. Elija una de las opciones siguientes o cancele ahora mismo.`,
    leadWithoutOffers: (brand) => `Aquí puede mantener su suscripción a ${brand} o cancelarla.`,
    keep: 'Mantener mi suscripción',
    cancelAnyway: 'Cancelar de todos modos',
    chooseOne: 'Elija una de las opciones siguientes.',
    offersChanged:
      'Las ofertas han cambiado desde que se abrió esta página. Elija de nuevo una de las opciones siguientes.',
    pause: {
      title: (m) => `Pausar durante ${m}`,
      text: (m) =>
        `Tómese un descanso: no pagará nada durante ${m} y, después, su suscripción se reanudará donde la dejó.`,
    },
    discount: {
      title: (percent, m) => `${percent} % de descuento durante ${m}`,
      text: (percent, m) => `Quédese y obtenga un ${percent} % de descuento durante ${m}.`,
      textWithPrices: (discounted, price, m) =>
        `Quédese y pague ${discounted} en lugar de ${price} durante ${m}.`,
      action: (percent) => `Aceptar el ${percent} % de descuento`,
    },
    downgrade: {
      title: (label) => `Cambiar a ${label}`,
      text: (price, current) =>
        `Conserve lo esencial por ${price}${current ? ` en lugar de ${current}` : ''} en cada periodo de facturación.`,
      textWithoutPrice: 'Conserve lo esencial con un plan más pequeño.',
    },
    done: {
      cancelled: (brand) => ({
        title: 'Se ha enviado su solicitud de cancelación',
        text: `${brand} le confirmará la cancelación de su suscripción.`,
      }),
      kept: (brand) => ({
        title: 'Nos alegra que se quede',
        text: `Su suscripción a ${brand} continúa como hasta ahora.`,
      }),
      paused: (brand, m) => ({
        title: 'Su suscripción quedará en pausa',
        text: `${brand} pausará su suscripción durante ${m}.`,
      }),
      discounted: (brand, percent, m) => ({
        title: 'Su descuento está en camino',
        text: `${brand} le aplicará un ${percent} % de descuento durante ${m}.`,
      }),
      downgraded: (brand, label) => ({
        title: `Va a cambiar a ${label}`,
        text: `${brand} pasará su suscripción a ${label}.`,
      }),
    },
    close: 'Ya puede cerrar esta página.',
  },

  links: {
    unknown: {
      title: 'Este enlace no es válido',
      text: 'Es posible que la dirección esté incompleta. Vuelva a abrir el enlace desde su mensaje o pida uno nuevo a la empresa que se lo envió.',
    },
    used: {
      title: 'Este enlace ya se ha utilizado',
      text: 'Cada enlace funciona una sola vez y este ya cumplió su función. No tiene que hacer nada más aquí.',
      contact: (brand) =>
        `Si necesita hacer otro cambio, póngase en contacto con ${brand} para obtener un nuevo enlace.`,
    },
    expired: {
      title: 'Este enlace ha expirado',
      text: 'Por su seguridad, los enlaces dejan de funcionar pasado un tiempo.',
      contact: (brand) => `Póngase en contacto con ${brand} para obtener un nuevo enlace.`,
    },
    unavailable: {
      title: 'La actualización de tarjetas aún no está disponible aquí',
      text: (brand) =>
        `${brand} utiliza un proveedor de pagos cuyo formulario seguro de tarjeta todavía no puede mostrarse en esta página.`,
      contact: (brand) =>
        `Póngase en contacto con ${brand} para actualizar sus datos de pago. Este enlace no se ha utilizado.`,
    },
    stale: {
      title: 'Vuelva a intentarlo',
      text: 'Este formulario ha expirado o no se ha podido verificar. No se ha modificado nada.',
      reload: 'Recargar la página',
    },
    error: {
      title: 'Se produjo un error',
      text: 'No pudimos completar esta solicitud. Vuelva a intentarlo en unos minutos.',
      contact: (reference) =>
        `Si el problema persiste, póngase en contacto con la empresa que le envió el enlace e indique la referencia ${reference}.`,
    },
  },
};
