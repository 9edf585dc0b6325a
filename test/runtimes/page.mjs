// The script of a merchant's page, bundled for the browser with esbuild (--platform=browser): it creates a
// checkout session with the publishable key, as docs/sdk.md's browser section shows, and reports the outcome.
import {MerchantClient, PayappError} from '@payapp/sdk'

window.startCheckout = async ({baseUrl, publishableKey, lineItems, successUrl}) => {
  const payapp = new MerchantClient({baseUrl, publishableKey})
  try {
    const session = await payapp.checkout.sessions.create({line_items: lineItems, success_url: successUrl})
    return {ok: true, id: session.id, checkoutUrl: session.checkout_url}
  } catch (err) {
    return {ok: false, name: err.name, payapp: err instanceof PayappError, code: err.code, message: err.message}
  }
}
