/** What an error thrown while answering becomes: the app's problem document, logged as its status says. */
import { BerthError, problemFor, problemForMode, problemResponse, type ErrorTable } from './errors.js';
import { type AppServices } from './route.js';
import { type DispatchEnv } from './dispatch.js';
import { type AppHooks } from './app.js';

/** 503s that say a request asked for too much work, not that the server failed: a warning, without a stack. */
export const loadRefusals: ReadonlySet<string> = new Set(['BERTH_QUERY_TIMEOUT', 'BERTH_BUSY']);

export async function errorResponse(
  error: Error,
  env: DispatchEnv,
  where: string,
  services: AppServices,
  hooks: AppHooks,
  errors: ErrorTable,
): Promise<Response> {
  const { requestId } = env;
  if (env.hookContext) {
    for (const hook of hooks.onError) {
      const answer = await hook(env.hookContext, error);
      if (answer) return answer;
    }
  }
  if (error instanceof BerthError) {
    env.errorCode = error.code;
    const problem = problemFor(
      error.code,
      error.detail,
      {
        requestId,
        ...(error.errors ? { errors: error.errors } : {}),
        ...(error.hint ? { hint: error.hint } : {}),
        ...(error.developerHint ? { developerHint: error.developerHint } : {}),
      },
      errors,
    );
    const { developerHint } = problem;
    if (loadRefusals.has(error.code)) services.logger.warn({ requestId, code: error.code }, error.message);
    else if (problem.status >= 500)
      services.logger.error(
        { requestId, err: error.cause ?? error, ...(developerHint ? { developerHint } : {}) },
        error.message,
      );
    // A developer hint is for whoever runs the app: always in the log, in the answer only in debug mode.
    else if (developerHint)
      services.logger.warn({ requestId, code: error.code, developerHint }, error.message);
    return problemResponse(problemForMode(problem, services.mode), {
      ...error.headers,
      'x-request-id': requestId,
    });
  }
  services.logger.error({ requestId, err: error }, `unexpected error in ${where}`);
  env.errorCode = 'BERTH_INTERNAL';
  const problem = problemFor('BERTH_INTERNAL', 'the server failed while answering this request', {
    requestId,
    ...(services.mode === 'debug' && error.stack ? { stack: error.stack } : {}),
  });
  return problemResponse(problem, { 'x-request-id': requestId });
}
