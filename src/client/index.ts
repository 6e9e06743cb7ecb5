export { sign, verify, canonicalString, sha256Hex, signedPath, signatureHeaders, safeEqualHex } from './signing.js';
export type { SignInput, Body } from './signing.js';
export { signWebhook, verifyWebhook } from './webhook-signing.js';
export type { VerifyWebhookOptions, WebhookVerdict } from './webhook-signing.js';
export { ApiClient } from './api-client.js';
export type { ApiClientOptions, RequestOptions, RawResponse } from './api-client.js';
export { RpcctlClientError, ApiError, NetworkError } from './errors.js';
export type * from './types.js';
