/** `payapp/sdk`: the SDK, which lives in its own package (@payapp/sdk), re-exported for existing users. */
export * from '@payapp/sdk'
