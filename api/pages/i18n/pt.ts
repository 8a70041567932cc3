import type { PageMessages } from './messages.js';

const months = (n: number) => (n === 1 ? '1 mês' : `${n} meses`);

/**
 * One catalogue for Brazil and Portugal: no "você", no possessives that need or drop an article, and
 * words spelled and used the same way on both sides (no "salvar"/"guardar", "contato"/"contacto",
 * "faturamento"/"faturação", "aceito"/"aceite").
 */
export const pt: PageMessages = {
  lang: 'pt',
  months,
  neutralBrand: 'Atualização de pagamento',
  footer: (brand) => `Página segura fornecida pela Recoup para ${brand}`,
  errorTitle: (title) => `Erro: ${title}`,

  card: {
    title: 'Atualize os dados de pagamento',
    lead: (brand) => `Informe os dados do cartão que ${brand} passará a usar para os pagamentos.`,
    number: 'Número do cartão',
    expiry: 'Data de validade',
    expiryHint: 'MM/AA',
    cvc: 'Código de segurança',
    cvcHint: '3 ou 4 dígitos',
    checkDetails: 'Verifique os dados do cartão',
    notAccepted: 'O cartão foi recusado',
    save: 'Confirmar cartão',
    secure: 'Os dados do cartão são enviados apenas ao serviço de pagamentos e nunca ficam armazenados.',
    errors: {
      number_missing: 'Informe o número do cartão.',
      number_length: 'O número do cartão tem entre 12 e 19 dígitos.',
      number_invalid: 'Este número de cartão não é válido. Verifique o número e tente novamente.',
      expiry_format: 'Informe a data de validade no formato MM/AA, por exemplo 04/29.',
      expiry_month: 'O mês de validade deve estar entre 01 e 12.',
      expired: 'Este cartão já expirou. Utilize um cartão dentro do prazo de validade.',
      cvc_format: 'O código de segurança corresponde aos 3 ou 4 dígitos indicados no cartão.',
    },
    refusals: {
      declined: 'O banco emissor recusou este cartão. Por favor, utilize outro cartão.',
      testCardRequired: 'Esta é uma conta de teste: utilize um cartão de teste, como o 4242 4242 4242 4242.',
      other: (code) => `Não foi possível atualizar o cartão (${code}). Por favor, tente com outro cartão.`,
    },
    label: (brand, last4) => `cartão ${brand} terminado em ${last4}`,
    savedTitle: 'O cartão foi atualizado',
    savedLead: (brand, card) => `Obrigado. A partir de agora, ${brand} passará a usar o ${card}.`,
    savedRetry:
      'Os pagamentos pendentes serão tentados novamente com este cartão em breve. Pode fechar esta página.',
    backTo: (brand) => `Voltar para ${brand}`,
    notChanged: 'O cartão não foi alterado',
    leftHostedForm: 'O formulário seguro foi fechado antes da confirmação do cartão.',
    hostedFormIncomplete: 'O formulário seguro do cartão ficou incompleto.',
    tryAgain: 'Tentar novamente',
  },

  cancel: {
    title: 'Antes de cancelar',
    leadWithOffers: (brand) =>
      `${brand} gostaria que ficasse. Escolha uma das opções abaixo ou cancele agora mesmo.`,
    leadWithoutOffers: (brand) => `Pode manter a assinatura de ${brand} ou cancelá-la aqui.`,
    keep: 'Manter a assinatura',
    cancelAnyway: 'Cancelar mesmo assim',
    chooseOne: 'Escolha uma das opções abaixo.',
    offersChanged:
      'As ofertas mudaram desde que esta página foi aberta. Escolha novamente uma das opções abaixo.',
    pause: {
      title: (m) => `Pausar durante ${m}`,
      text: (m) =>
        `Faça uma pausa: sem pagamentos durante ${m}; depois, a assinatura é retomada de onde parou.`,
    },
    discount: {
      title: (percent, m) => `${percent}% de desconto durante ${m}`,
      text: (percent, m) => `Mantenha a assinatura com ${percent}% de desconto durante ${m}.`,
      textWithPrices: (discounted, price, m) =>
        `Mantenha a assinatura e pague ${discounted} em vez de ${price} durante ${m}.`,
      action: (percent) => `Aceitar o desconto de ${percent}%`,
    },
    downgrade: {
      title: (label) => `Mudar para ${label}`,
      text: (price, current) =>
        `Fique com o essencial por ${price}${current ? ` em vez de ${current}` : ''} em cada período de pagamento.`,
      textWithoutPrice: 'Mantenha o essencial com um plano mais simples.',
    },
    done: {
      cancelled: (brand) => ({
        title: 'O pedido de cancelamento foi enviado',
        text: `${brand} vai confirmar o cancelamento da assinatura.`,
      }),
      kept: (brand) => ({
        title: 'Obrigado por ficar',
        text: `A assinatura de ${brand} continua como antes.`,
      }),
      paused: (brand, m) => ({
        title: 'A assinatura será pausada',
        text: `${brand} vai pausar a assinatura durante ${m}.`,
      }),
      discounted: (brand, percent, m) => ({
        title: 'O desconto será aplicado em breve',
        text: `${brand} vai aplicar um desconto de ${percent}% durante ${m}.`,
      }),
      downgraded: (brand, label) => ({
        title: `Vai mudar para ${label}`,
        text: `${brand} vai passar a assinatura para ${label}.`,
      }),
    },
    close: 'Pode fechar esta página.',
  },

  links: {
    unknown: {
      title: 'Este link não é válido',
      text: 'O endereço pode estar incompleto. Abra novamente o link a partir da mensagem recebida ou peça um novo à empresa que o enviou.',
    },
    used: {
      title: 'Este link já foi utilizado',
      text: 'Cada link só pode ser utilizado uma vez, e este já cumpriu a sua função. Não é necessário fazer mais nada aqui.',
      contact: (brand) => `Para fazer outra alteração, fale com ${brand} e peça um novo link.`,
    },
    expired: {
      title: 'Este link expirou',
      text: 'Por motivos de segurança, os links deixam de funcionar após algum tempo.',
      contact: (brand) => `Fale com ${brand} para obter um novo link.`,
    },
    unavailable: {
      title: 'A atualização do cartão ainda não está disponível aqui',
      text: (brand) =>
        `${brand} utiliza um serviço de pagamentos cujo formulário seguro de cartão ainda não pode ser mostrado nesta página.`,
      contact: (brand) =>
        `Por favor, fale com ${brand} para atualizar os dados de pagamento. Este link não foi utilizado.`,
    },
    stale: {
      title: 'Tente novamente',
      text: 'Este formulário expirou ou não pôde ser verificado. Nada foi alterado.',
      reload: 'Recarregar a página',
    },
    error: {
      title: 'Ocorreu um erro',
      text: 'Não foi possível concluir este pedido. Tente novamente dentro de alguns minutos.',
      contact: (reference) =>
        `Se o problema persistir, fale com a empresa que enviou o link e indique a referência ${reference}.`,
    },
  },
};
