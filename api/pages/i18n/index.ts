import { pageLocales, type PageLocale } from '../../../domain/links.js';
import type { AppContext } from '../../context.js';
import { de } from './de.js';
import { en } from './en.js';
import { es } from './es.js';
import { fr } from './fr.js';
import { it } from './it.js';
import { nl } from './nl.js';
import { pt } from './pt.js';
import type { PageMessages } from './messages.js';

export type { PageMessages } from './messages.js';

const catalogues: Record<PageLocale, PageMessages> = { en, de, fr, es, it, nl, pt };

/** The words of the pages in one language. */
export const messagesIn = (locale: PageLocale): PageMessages => catalogues[locale];

const isPageLocale = (tag: string): tag is PageLocale => (pageLocales as readonly string[]).includes(tag);

/**
 * The words of a page in the customer's language: the one the link was made for, else the first of the
 * browser's preferences (Accept-Language) that the pages speak, else English.
 */
export function messagesFor(ctx: AppContext, linkLocale?: PageLocale | null): PageMessages {
  if (linkLocale) return catalogues[linkLocale];
  const accepted = ctx.acceptsLanguages([...pageLocales]);
  return catalogues[typeof accepted === 'string' && isPageLocale(accepted) ? accepted : 'en'];
}
