export { startWebhookReceiver } from './listen.js';
export type { ForwardResult, ReceivedWebhook, WebhookReceiver, WebhookReceiverOptions } from './listen.js';
export { DEFAULT_FILTERS } from './filters.js';
export type { WebhookFilters, EventKind, Direction } from './filters.js';
export { RETRY_SCHEDULE_MS, retryDelayMs } from './schedule.js';
export { blockedReason, checkWebhookUrl } from './ssrf.js';
