export { UpstreamError, type RouteHints, type UpstreamRequest, type UpstreamResponse } from './call.js';
export { BUFFERED_BYTES, UpstreamBody } from './body.js';
export { Upstream, type FailureReason } from './upstream.js';
export { UpstreamSet, type UpstreamSetOptions } from './set.js';
export { UpstreamDirectory, type UpstreamObserver } from './directory.js';
