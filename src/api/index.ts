export { createApiServer, RATE_LIMITED } from './server.js';
export type { ApiServer, ApiServerOptions } from './server.js';
export { route } from './router.js';
export type { RouteDef, AppContext, HandlerContext } from './router.js';
export { HttpError, badRequest, notFound } from './http.js';
export { AUTH_ERRORS } from './auth.js';
export { presentEndpoint, endpointUrl } from './present.js';
