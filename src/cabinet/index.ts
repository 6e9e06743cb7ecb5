/**
 * The web cabinet: the merchant dashboard served on the API listener for every path outside
 * /v1, /metrics and /health. Pages call the Public API's own route handlers (invokeRoute), so
 * limits and validation have one source. Other parts add pages through CabinetSection.
 */
export { createCabinet } from './server.js';
export type { Cabinet, CabinetOptions } from './server.js';
export type { CabinetSection, OpenPageContext, OpenPageRoute, PageContext, PageRoute } from './context.js';
export { redirect, send, SECURITY_HEADERS } from './respond.js';
export { html, raw, escapeHtml, Html } from './html.js';
/** The built-in pages' pieces, for sections to match their look. */
export { attempt, badge, copyable, csrfField, errorBox, num, pageHeader, time } from './pages/ui.js';
export { watchNetworks } from './pages/networks.js';
export {
  setLogin, loginOf, checkLogin, createLoginLink, consumeLoginLink, CredentialError, MIN_PASSWORD_LENGTH, LOGIN_LINK_TTL_MS,
} from './credentials.js';
export type { SessionLimits } from './sessions.js';
