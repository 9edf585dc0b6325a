/**
 * `payapp/sdk`: everything an app needs from one import. Nothing here (or below it) loads the CLI,
 * oclif, the gateway, fastify or SQLite; test/sdk/clients.test.ts checks the import graph.
 */
export {
  AppClient,
  StoreClient,
  MerchantClient,
  type AppClientOptions,
  type StoreClientOptions,
  type MerchantClientOptions,
  type ClientOptions,
  type RequestOptions,
  type CallArgs,
  type CallResult,
  type ListParams,
  type QueryOf,
  type EndpointIdFor,
} from './client.js'
export {
  GatewayAdmin,
  type GatewayAdminOptions,
  type AdminMerchant,
  type AdminInstallation,
  type AdminSecretKey,
  type AdminPublishableKey,
  type AdminRevoked,
  type AdminClock,
  type AdminSandboxReset,
  type AdminCheckoutCompletion,
  type AdminRefundResult,
  type AdminDisputeResult,
  type AdminEventsQuery,
  type AdminWebhookEndpoint,
  type AdminWebhookDeliveryAttempt,
  type AdminFault,
  type AdminSubscriptionConfirmation,
  type AdminScheduledJob,
  type AdminEventResendResult,
} from './admin.js'
export type {UploadInput, UploadMeta} from './resources/upload.js'

export {
  PayappError,
  InvalidRequestError,
  AuthenticationError,
  PaymentRequiredError,
  PermissionError,
  NotFoundError,
  ConflictError,
  IdempotencyError,
  RateLimitError,
  APIError,
  ConnectionError,
  ResponseValidationError,
  SignatureVerificationError,
  type PayappErrorFields,
} from './errors.js'

export {
  verifyWebhook,
  matchesEventType,
  verifyWebhookAsync,
  signWebhookPayload,
  computeSignature,
  SIGNATURE_HEADER,
  DEFAULT_TOLERANCE_SECONDS,
  type WebhookEvent,
  type VerifyWebhookOptions,
} from './webhooks-node.js'

export {PagePromise, type Page, type PageParams} from './pagination.js'
export {path} from './path.js'
export {SDK_VERSION, type RequestEvent, type ResponseEvent} from './transport.js'

export {adminEndpoints, ADMIN_PREFIX, type AdminEndpointId, type AdminEndpointDef} from './admin-endpoints.js'
export {eventTypes, type EventType, type EventDef, type TypedEvent} from './events.js'
export {endpoints, DOOR_PREFIX, type EndpointId, type Endpoint, type EndpointDef, type Door, type BodyOf, type ResultOf} from './endpoints.js'
export * as schemas from './schemas/index.js'

// The resources as the API returns them, and the bodies that create and update them.
export type {
  Store,
  Product,
  ProductCreate,
  ProductUpdate,
  Price,
  PriceCreate,
  PriceUpdate,
  OptionGroup,
  OptionGroupCreate,
  OptionGroupUpdate,
  OptionValue,
  OptionValueCreate,
  Variant,
  VariantCreate,
  VariantUpdate,
  FileObject,
} from './schemas/catalog.js'
export type {
  Merchant,
  CheckoutSession,
  CheckoutSessionCreate,
  CheckoutSessionUpdate,
  RefundCreate,
  RefundRecord,
  StoreCheckout,
  StoreCheckoutCreate,
  Order,
  OrderCreate,
  OrderUpdate,
  OrderEvidence,
  OrderEvidenceCreate,
  Payment,
  LivePayment,
  SandboxPayment,
  SandboxRefund,
  Dispute,
  Payout,
  Balance,
  Invoice,
  Subscription,
  SubscriptionLink,
  SubscriptionLinkCreate,
  SubscriptionLinkUpdate,
  AnalyticsSummary,
  PlatformEvent,
} from './schemas/commerce.js'
export type {Scope, Environment, List} from './schemas/common.js'
export type {Customer, FraudWarning, FraudWarningsListQuery, FraudWarningTestCreate, SubscriptionCreate, SubscriptionCancel} from './schemas/billing.js'

import type {ResultOf} from './endpoints.js'
/** A refund as `refunds.list` returns it: a sandbox refund row, or in live a refunded charge. */
export type Refund = ResultOf<'refunds.list'>
