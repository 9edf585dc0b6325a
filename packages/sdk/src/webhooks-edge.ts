/**
 * `@payapp/sdk/webhooks`: webhook verification for runtimes without Node's built-ins (edge functions,
 * Deno, workers). This entry and everything it imports use only Web APIs (Web Crypto, TextEncoder).
 */
export {verifyWebhookAsync, SIGNATURE_HEADER, DEFAULT_TOLERANCE_SECONDS, type WebhookEvent, type VerifyWebhookOptions} from './webhooks-web.js'
export {SignatureVerificationError, PayappError} from './errors.js'
