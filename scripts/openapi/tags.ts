/** What each tag of the route table groups, for the document's tag list (a unit test keeps one for every tag). */
export const TAG_DESCRIPTIONS: Readonly<Record<string, string>> = {
  Operations: 'Health, readiness and metrics: for load balancers, orchestrators and Prometheus',
  'API keys': 'An organisation\'s API keys: create, list, rotate, revoke',
  Domains: 'Sending domains: DNS records, verification, DKIM rotation, health and DMARC reports',
  Webhooks: 'Webhook endpoints, their deliveries, replay and recovery',
  Templates: 'Stored message templates',
  Billing: 'The organisation\'s plan and usage',
  Suppressions: 'Addresses mail is never sent to: list, add, remove, import, export',
  'Inbound routes': 'Where received mail for a domain goes, and the raw received messages',
  Messages: 'Sending, scheduling, cancelling and reading messages',
  Events: 'The event log of messages, as pages and as a WebSocket stream',
  Statistics: 'Counts of message events over time',
  Tracking: 'Open, click and unsubscribe links in sent mail; no API key',
  Operator: 'The installation\'s operator API: organisations, egress, queues (operator key only)',
  'Audit log': 'Changes to configuration, who made them and when',
  Streams: 'Message streams: the transactional stream and the organisation\'s broadcast streams',
  Reputation: 'Bounce and complaint rates per stream, and resuming a stream the reputation guard paused',
  Privacy: 'Erasing a recipient\'s data, and how long the organisation\'s data is kept'
}
