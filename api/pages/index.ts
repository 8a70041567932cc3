import Router from '@koa/router';
import type { Next } from 'koa';
import { createLinkOutcomes } from '../../services/link-outcomes.js';
import { createLinkService } from '../../services/links.js';
import type { AppContext, AppState } from '../context.js';
import { routeNamed } from '../route.js';
import type { LinkDeps } from '../routes/links.js';
import { cancelFlowPage } from './cancel-flow.js';
import { cardUpdatePage } from './card-update.js';
import { messagesFor } from './i18n/index.js';
import { HttpError } from '../http-error.js';
import { neutralBrand } from './layout.js';
import { errorPage, staleFormPage } from './notices.js';
import { stylesheet, stylesheetPath } from './styles.js';

/**
 * Renders failures as a friendly HTML page (the API's JSON error body would mean nothing here): a request
 * the page cannot take (a form over 64 KiB) as a form to send again with its status, anything else as 500.
 */
async function htmlErrors(ctx: AppContext, next: Next): Promise<void> {
  try {
    await next();
  } catch (error) {
    const messages = messagesFor(ctx);
    if (error instanceof HttpError && error.status < 500)
      return staleFormPage(ctx, { messages, brand: neutralBrand(messages) }, ctx.path, error.status);
    ctx.state.log.error({ err: error }, 'hosted page failed');
    errorPage(ctx, messages, ctx.state.requestId);
  }
}

/**
 * The hosted pages customers open from links: card update, cancel flow, and their stylesheet. No API key:
 * the unguessable token in the path is the credential. Form bodies are URL-encoded, parsed from the raw body.
 */
export function hostedPages(deps: LinkDeps) {
  const pageDeps = {
    stores: deps.stores,
    publicBaseUrl: deps.publicBaseUrl,
    clock: deps.clock,
    links: createLinkService(deps),
    outcomes: createLinkOutcomes(deps),
  };
  const cardUpdate = cardUpdatePage(pageDeps);
  const cancelFlow = cancelFlowPage(pageDeps);
  const router = new Router<AppState>();
  const [cardPath, cancelPath] = ['/update-card/:token', '/cancel-flow/:token'];
  const card = [routeNamed(cardPath), htmlErrors] as const;
  const cancel = [routeNamed(cancelPath), htmlErrors] as const;
  router.get(stylesheetPath, routeNamed(stylesheetPath), (ctx) => {
    ctx.type = 'text/css; charset=utf-8';
    ctx.set({ 'Cache-Control': 'public, max-age=86400', 'X-Content-Type-Options': 'nosniff' });
    ctx.body = stylesheet;
  });
  router.get(cardPath, ...card, (ctx) => cardUpdate.show(ctx, ctx.params.token ?? ''));
  router.post(cardPath, ...card, (ctx) => cardUpdate.submit(ctx, ctx.params.token ?? ''));
  router.get(cancelPath, ...cancel, (ctx) => cancelFlow.show(ctx, ctx.params.token ?? ''));
  router.post(cancelPath, ...cancel, (ctx) => cancelFlow.submit(ctx, ctx.params.token ?? ''));
  return router.routes();
}
