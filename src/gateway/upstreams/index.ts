export { UpstreamError, type RouteHints, type UpstreamRequest, type UpstreamResponse } from './call.js';
export { BUFFERED_BYTES, UpstreamBody } from './body.js';
export { Upstream, type FailureReason } from './upstream.js';
export { UpstreamSet, type UpstreamSetOptions } from './set.js';
export { networkPolicy, upstreamOptions, UpstreamDirectory, type NetworkPolicy, type UpstreamObserver } from './directory.js';
export { ErrorClassifier, DEFAULT_ERROR_RULES, type ErrorClass, type ErrorRule } from './rpc-errors.js';
export type { MethodRules } from './methods.js';
