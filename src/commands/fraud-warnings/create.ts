import {writeCommand} from '../../cli/command-factory.js'
import {fraudWarningDetails} from '../../cli/services/commerce-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

export default writeCommand({
  endpoint: 'fraudWarnings.testCreate',
  summary: endpoints['fraudWarnings.testCreate'].summary + ' (merchant API test helper).',
  examples: ['<%= config.bin %> fraud-warnings create --amount 9900 --currency eur --fraud-type made_with_stolen_card'],
  render: fraudWarningDetails,
})
