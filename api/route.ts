import type { Router, RouterMiddleware } from '@koa/router';
import type { Next } from 'koa';
import { z } from 'zod';
import type { AppContext } from './context.js';
import { HttpError } from './http-error.js';
import type { AuthMode } from './middleware/auth.js';
import { bodyLimitOf, parseJsonBody, sizeText } from './middleware/json-body.js';
import type { RateLimitKind } from './middleware/rate-limit.js';
import { ErrorBody, InternalErrorBody, RateLimitBody, ValidationError } from './schemas/errors.js';
import { validate } from './validate.js';

/** What a handler answers: status, JSON body and optional headers. */
export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export const reply = (status: number, body: unknown, headers?: Record<string, string>): Reply => ({
  status,
  body,
  ...(headers ? { headers } : {}),
});

type Schema = z.ZodType;
type Infer<S> = S extends z.ZodType ? z.infer<S> : undefined;

/** One API operation: its contract (used for validation and OpenAPI alike) and its handler. */
export interface RouteDef<
  B extends Schema | undefined,
  Q extends Schema | undefined,
  P extends Schema | undefined,
> {
  method: 'get' | 'post';
  path: string; // Koa style, e.g. /api/recovery/status/:transactionId
  tag: string;
  summary: string;
  description?: string;
  auth: AuthMode | 'none';
  rateLimit?: RateLimitKind;
  /** Open to browser code on any origin (answers, errors included, and the preflight). */
  cors?: boolean;
  body?: B;
  /** Validates the body with a schema that depends on the caller (e.g. its gateway's token shape). */
  bodyFor?: (ctx: AppContext) => Schema;
  query?: Q;
  params?: P;
  responses: Record<number, { description: string; schema?: Schema }>;
  handle: (ctx: AppContext, input: { body: Infer<B>; query: Infer<Q>; params: Infer<P> }) => Promise<Reply>;
}

/** A route with its types erased, ready to mount and to describe. */
export interface Route {
  def: RouteDef<Schema | undefined, Schema | undefined, Schema | undefined>;
}

/** Declares a route; input is validated with the same schemas the OpenAPI document shows. */
export function route<
  B extends Schema | undefined = undefined,
  Q extends Schema | undefined = undefined,
  P extends Schema | undefined = undefined,
>(def: RouteDef<B, Q, P>): Route {
  return { def: def };
}

/** Middleware factories the mounting needs; supplied by the app. */
export interface Guards {
  auth: (mode: AuthMode) => RouterMiddleware<AppContext['state']>;
  rateLimit: (kind: RateLimitKind) => RouterMiddleware<AppContext['state']>;
  /** Told of every answer whose status or body its OpenAPI entry does not declare (tests fail on it). */
  undeclared?: (problem: string) => void;
}

type Responses = Route['def']['responses'];

/**
 * Every answer a route may give: its own, plus what its input, key and rate limit imply (400 with details,
 * 413 and 415 for a body, 401, 429). The OpenAPI document shows these, and tests hold every answer to them.
 */
export function declaredResponses(def: Route['def']): Responses {
  const implied: Responses = {};
  if (def.body || def.query || def.params)
    implied[400] = { description: 'Validation failed', schema: ValidationError };
  if (def.body) {
    implied[413] = {
      description: `Request body too large (${sizeText(bodyLimitOf(def.path))})`,
      schema: ErrorBody,
    };
    implied[415] = { description: 'Content-Type is not application/json', schema: ErrorBody };
  }
  if (def.auth !== 'none') implied[401] = { description: 'Missing or invalid API key', schema: ErrorBody };
  if (def.rateLimit) implied[429] = { description: 'Rate limit exceeded', schema: RateLimitBody };
  implied[500] = {
    description: 'Internal error (the request id finds it in the logs)',
    schema: InternalErrorBody,
  };
  return { ...implied, ...def.responses };
}

/** What is wrong with an answer against the route's declared responses, or null when it matches. */
function undeclaredIn(def: Route['def'], out: Pick<Reply, 'status' | 'body'>): string | null {
  const declared = declaredResponses(def)[out.status];
  const where = `${def.method.toUpperCase()} ${def.path} answered ${out.status}`;
  if (!declared) return `${where}, which its responses do not declare`;
  const parsed = declared.schema?.safeParse(out.body);
  if (!parsed || parsed.success) return null;
  return `${where} with a body its schema refuses: ${z.prettifyError(parsed.error)}`;
}

/** Names the request by the template it was registered with, for metrics (never the raw path). */
export function routeNamed(path: string) {
  return async (ctx: AppContext, next: Next): Promise<void> => {
    ctx.state.route = path;
    await next();
  };
}

/** Registers routes on a router: auth → rate limit → body parsing and validation → handler, in that order. */
export function mount(router: Router<AppContext['state']>, routes: Route[], guards: Guards): void {
  for (const { def } of routes) {
    const chain: Array<RouterMiddleware<AppContext['state']>> = [routeNamed(def.path)];
    if (def.cors) {
      chain.push(async (ctx, next) => {
        ctx.set('Access-Control-Allow-Origin', '*');
        await next();
      });
      router.options(def.path, routeNamed(def.path), (ctx) => {
        ctx.set({
          'Access-Control-Allow-Origin': '*',
          'Access-Control-Allow-Methods': def.method.toUpperCase(),
          'Access-Control-Allow-Headers': 'X-API-KEY, Content-Type',
          'Access-Control-Max-Age': '600',
        });
        ctx.status = 204;
      });
    }
    const { undeclared } = guards;
    const check = (out: Pick<Reply, 'status' | 'body'>) => {
      const problem = undeclared && undeclaredIn(def, out);
      if (problem) undeclared(problem);
    };
    // Errors are answers too: a refusal the route does not declare is reported like any other answer.
    if (undeclared)
      chain.push(async (_ctx, next) => {
        try {
          await next();
        } catch (error) {
          if (error instanceof HttpError) check(error);
          throw error;
        }
      });
    if (def.auth !== 'none') chain.push(guards.auth(def.auth));
    if (def.rateLimit) chain.push(guards.rateLimit(def.rateLimit));
    chain.push(async (ctx) => {
      const input = {
        params: def.params ? validate(def.params, ctx.params) : undefined,
        query: def.query ? validate(def.query, ctx.query) : undefined,
        body: def.body ? validate(def.bodyFor?.(ctx) ?? def.body, parseJsonBody(ctx) ?? {}) : undefined,
      };
      const out = await def.handle(ctx, input);
      check(out);
      ctx.status = out.status;
      if (out.headers) ctx.set(out.headers);
      ctx.body = out.body;
    });
    router[def.method](def.path, ...chain);
  }
}
