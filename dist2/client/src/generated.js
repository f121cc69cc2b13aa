// Generated from docs/openapi.json by scripts/gen_client.ts (npm run gen:client). Do not edit by hand.
/* eslint-disable */
/** Every HTTP operation of docs/openapi.json, grouped by resource. */
export function operations(call) {
    return {
        healthz: {
            /** GET /healthz: Liveness: the process is up. */
            get: async (options) => await call({ method: 'GET', path: '/healthz' }, options)
        },
        readyz: {
            /** GET /readyz: Readiness: NATS answers, Redis takes writes, and the queue has room. */
            get: async (options) => await call({ method: 'GET', path: '/readyz' }, options)
        },
        metrics: {
            /** GET /metrics: Prometheus metrics. */
            get: async (options) => await call({ method: 'GET', path: '/metrics', text: true }, options)
        },
        apiKeys: {
            /** POST /v1/api-keys: Create an API key; the value is returned only in this response. */
            create: async (body, options) => await call({ method: 'POST', path: '/v1/api-keys', body }, options),
            /** GET /v1/api-keys: List the organisation's API keys (never their values), oldest first. */
            list: async (query, options) => await call({ method: 'GET', path: '/v1/api-keys', query }, options),
            /** GET /v1/api-keys/{id}: Read one API key (never its value). */
            get: async (id, options) => await call({ method: 'GET', path: `/v1/api-keys/${encodeURIComponent(id)}` }, options),
            /** DELETE /v1/api-keys/{id}: Revoke an API key; it is refused (401) from then on. */
            delete: async (id, options) => await call({ method: 'DELETE', path: `/v1/api-keys/${encodeURIComponent(id)}` }, options),
            /** POST /v1/api-keys/{id}/rotate: Rotate an API key: issue a new value; the old one works for the grace period. */
            rotate: async (id, body, options) => await call({ method: 'POST', path: `/v1/api-keys/${encodeURIComponent(id)}/rotate`, body }, options)
        },
        domains: {
            /** POST /v1/domains: Claim a sending domain; publish the returned DNS records, then verify it (the first claim to verify owns the name). */
            create: async (body, options) => await call({ method: 'POST', path: '/v1/domains', body }, options),
            /** GET /v1/domains: List the organisation's domains, oldest first. */
            list: async (query, options) => await call({ method: 'GET', path: '/v1/domains', query }, options),
            /** GET /v1/domains/{id}: Read one domain. */
            get: async (id, options) => await call({ method: 'GET', path: `/v1/domains/${encodeURIComponent(id)}` }, options),
            /** DELETE /v1/domains/{id}: Delete a domain and free its name. */
            delete: async (id, options) => await call({ method: 'DELETE', path: `/v1/domains/${encodeURIComponent(id)}` }, options),
            /** POST /v1/domains/{id}/verify: Check the domain's DNS records (or, with OB_DOMAIN_VERIFICATION=off, mark it verified). */
            verify: async (id, options) => await call({ method: 'POST', path: `/v1/domains/${encodeURIComponent(id)}/verify` }, options),
            /** POST /v1/domains/{id}/dkim/rotate: Add a new DKIM key pair (RSA-2048 and ed25519, each under a new selector); it signs from the verification that finds both its TXT records, and the replaced keys' records stay listed for 7 days. */
            dkimRotate: async (id, options) => await call({ method: 'POST', path: `/v1/domains/${encodeURIComponent(id)}/dkim/rotate` }, options)
        },
        webhooks: {
            /** POST /v1/webhooks: Register a webhook; its signing secret is returned only in this response. */
            create: async (body, options) => await call({ method: 'POST', path: '/v1/webhooks', body }, options),
            /** GET /v1/webhooks: List the organisation's webhooks (without secrets), oldest first. */
            list: async (query, options) => await call({ method: 'GET', path: '/v1/webhooks', query }, options),
            /** GET /v1/webhooks/{id}: Read one webhook (without its secret). */
            get: async (id, options) => await call({ method: 'GET', path: `/v1/webhooks/${encodeURIComponent(id)}` }, options),
            /** PATCH /v1/webhooks/{id}: Change the events of a webhook, pause it, or make it active again (also after it failed). */
            update: async (id, body, options) => await call({ method: 'PATCH', path: `/v1/webhooks/${encodeURIComponent(id)}`, body }, options),
            /** DELETE /v1/webhooks/{id}: Delete a webhook; nothing more is delivered to it. */
            delete: async (id, options) => await call({ method: 'DELETE', path: `/v1/webhooks/${encodeURIComponent(id)}` }, options),
            /** POST /v1/webhooks/{id}/test: Send a signed test event to this webhook. */
            test: async (id, body, options) => await call({ method: 'POST', path: `/v1/webhooks/${encodeURIComponent(id)}/test`, body }, options),
            /** GET /v1/webhooks/{id}/deliveries: Delivery attempts of this webhook, newest first. */
            deliveries: async (id, query, options) => await call({ method: 'GET', path: `/v1/webhooks/${encodeURIComponent(id)}/deliveries`, query }, options),
            /** POST /v1/webhooks/{id}/rotate-secret: Replace the signing secret; the previous one keeps signing during a grace period. */
            rotateSecret: async (id, body, options) => await call({ method: 'POST', path: `/v1/webhooks/${encodeURIComponent(id)}/rotate-secret`, body, idempotent: true }, options),
            /** POST /v1/webhooks/{id}/replay: Send one event to this webhook again. */
            replay: async (id, body, options) => await call({ method: 'POST', path: `/v1/webhooks/${encodeURIComponent(id)}/replay`, body, idempotent: true }, options),
            /** POST /v1/webhooks/{id}/recover: Send again every event since a time that this webhook did not receive. */
            recover: async (id, body, options) => await call({ method: 'POST', path: `/v1/webhooks/${encodeURIComponent(id)}/recover`, body, idempotent: true }, options)
        },
        templates: {
            /** POST /v1/templates: Create a template with {{var}} placeholders. */
            create: async (body, options) => await call({ method: 'POST', path: '/v1/templates', body }, options),
            /** GET /v1/templates: List the organisation's templates, oldest first. */
            list: async (query, options) => await call({ method: 'GET', path: '/v1/templates', query }, options),
            /** GET /v1/templates/{id}: Read one template. */
            get: async (id, options) => await call({ method: 'GET', path: `/v1/templates/${encodeURIComponent(id)}` }, options),
            /** PATCH /v1/templates/{id}: Change some fields of a template. */
            update: async (id, body, options) => await call({ method: 'PATCH', path: `/v1/templates/${encodeURIComponent(id)}`, body }, options),
            /** DELETE /v1/templates/{id}: Delete a template. */
            delete: async (id, options) => await call({ method: 'DELETE', path: `/v1/templates/${encodeURIComponent(id)}` }, options)
        },
        billing: {
            /** GET /v1/billing: The organisation's plan and per-key rate limit. */
            get: async (options) => await call({ method: 'GET', path: '/v1/billing' }, options),
            /** PATCH /v1/billing: Change the plan; the new rate limit applies from the next request. */
            update: async (body, options) => await call({ method: 'PATCH', path: '/v1/billing', body }, options)
        },
        suppressions: {
            /** GET /v1/suppressions: List suppressed addresses (hard bounces, complaints, unsubscribes, manual), in address order. */
            list: async (query, options) => await call({ method: 'GET', path: '/v1/suppressions', query }, options),
            /** POST /v1/suppressions: Suppress an address by hand (reason manual); sends to it are then skipped. */
            create: async (body, options) => await call({ method: 'POST', path: '/v1/suppressions', body }, options),
            /** DELETE /v1/suppressions/{email}: Remove an address from the suppression list so it can be sent to again. */
            delete: async (email, options) => await call({ method: 'DELETE', path: `/v1/suppressions/${encodeURIComponent(email)}` }, options)
        },
        inboundRoutes: {
            /** POST /v1/inbound/routes: Route inbound mail for an address (or a whole domain) to the organisation's webhooks as inbound.received events. */
            create: async (body, options) => await call({ method: 'POST', path: '/v1/inbound/routes', body }, options),
            /** GET /v1/inbound/routes: List the organisation's inbound routes, oldest first. */
            list: async (query, options) => await call({ method: 'GET', path: '/v1/inbound/routes', query }, options),
            /** GET /v1/inbound/routes/{id}: Read one inbound route. */
            get: async (id, options) => await call({ method: 'GET', path: `/v1/inbound/routes/${encodeURIComponent(id)}` }, options),
            /** DELETE /v1/inbound/routes/{id}: Delete an inbound route; mail to its address is then refused. */
            delete: async (id, options) => await call({ method: 'DELETE', path: `/v1/inbound/routes/${encodeURIComponent(id)}` }, options)
        },
        inbound: {
            /** GET /v1/inbound/messages/{id}/raw: The whole received message (message/rfc822) of an inbound.received event that left part of it out. */
            messagesRaw: async (id, options) => await call({ method: 'GET', path: `/v1/inbound/messages/${encodeURIComponent(id)}/raw`, text: true }, options)
        },
        whoami: {
            /** GET /v1/whoami: Describe the calling API key. */
            get: async (options) => await call({ method: 'GET', path: '/v1/whoami' }, options)
        },
        messages: {
            /** GET /v1/messages: List messages, newest first. */
            list: async (query, options) => await call({ method: 'GET', path: '/v1/messages', query }, options),
            /** GET /v1/messages/{id}: One message with its status, its recipients and events. */
            get: async (id, options) => await call({ method: 'GET', path: `/v1/messages/${encodeURIComponent(id)}` }, options),
            /** PATCH /v1/messages/{id}: Reschedule a scheduled message. */
            update: async (id, body, options) => await call({ method: 'PATCH', path: `/v1/messages/${encodeURIComponent(id)}`, body }, options),
            /** GET /v1/messages/{id}/content: The message as it was rendered for sending: subject, HTML, text, headers, attachment names. */
            content: async (id, options) => await call({ method: 'GET', path: `/v1/messages/${encodeURIComponent(id)}/content` }, options),
            /** POST /v1/messages/send: Send one message. */
            send: async (body, options) => await call({ method: 'POST', path: '/v1/messages/send', body, idempotent: true }, options),
            /** POST /v1/messages/batch: Send up to 100 messages. */
            batch: async (body, options) => await call({ method: 'POST', path: '/v1/messages/batch', body, idempotent: true }, options),
            /** POST /v1/messages/{id}/cancel: Cancel a scheduled message. */
            cancel: async (id, options) => await call({ method: 'POST', path: `/v1/messages/${encodeURIComponent(id)}/cancel` }, options),
            /** POST /v1/messages/analyze: Score content for spam signals before sending. */
            analyze: async (body, options) => await call({ method: 'POST', path: '/v1/messages/analyze', body }, options)
        },
        events: {
            /** GET /v1/events: List events, newest first. */
            list: async (query, options) => await call({ method: 'GET', path: '/v1/events', query }, options)
        },
        stats: {
            /** GET /v1/stats: Counts of messages sent and of each event type over a time range. */
            get: async (query, options) => await call({ method: 'GET', path: '/v1/stats', query }, options)
        }
    };
}
//# sourceMappingURL=generated.js.map