/** `payapp/sdk/webhooks`: @payapp/sdk/webhooks (Web Crypto verification, no Node built-ins), re-exported. */
export * from '@payapp/sdk/webhooks'
