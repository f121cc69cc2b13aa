// Generated from docs/openapi.json by scripts/gen_client.ts (npm run gen:client). Do not edit by hand.
/* eslint-disable */

/** Per-call options. */
export interface RequestOptions {
  /** Idempotency-Key for sends; generated (crypto.randomUUID) when absent and reused across retries. */
  idempotencyKey?: string
  /** Aborts the call, including any wait between retries. */
  signal?: AbortSignal
  /** Extra request headers. */
  headers?: Record<string, string>
}

/** What a generated method asks the transport to do. */
export interface CallSpec {
  method: string
  path: string
  body?: unknown
  query?: Record<string, unknown>
  idempotent?: true
  text?: true
}

export type Call = <T>(spec: CallSpec, options?: RequestOptions) => Promise<T>

/** Response of GET /healthz. */
export type GetHealthzResponse = {
  status: string
}

/** Response of GET /readyz. */
export type GetReadyzResponse = {
  /** `ok` when every check is `ok`; `queue_full` when only the queue is full; else `unavailable` */
  status: string
  checks: {
    /** `ok`, or `unavailable` when NATS does not answer within 1 s */
    nats: string
    /** `ok`; `full` when Redis answers but refuses writes at `maxmemory`; `unavailable` when it does not answer within 1 s */
    redis: string
    /** `ok`; `full` while the outbound queue or the store of large messages' content has no room for one more message below its share of OB_NATS_STORE_MB (sends answer 503 `queue_full`); `unavailable` when it cannot be read within 1 s */
    queue: string
  }
}

/** Request body of POST /v1/api-keys. */
export type PostApiKeysBody = {
  name: string
  /** A domain of the caller's organisation */
  domain_id: string
  permissions: Array<"send" | "read" | "manage" | "admin">
  environment?: "live" | "test"
  /** The message stream of this key's sends that name none (HTTP `stream`, SMTP `X-Outbox-Stream`); default `transactional` */
  default_stream?: string
}

/** Response of POST /v1/api-keys. */
export type PostApiKeysResponse = {
  id: string
  name: string
  domain_id: string
  permissions: Array<"send" | "read" | "manage" | "admin">
  environment: "live" | "test"
  /** The full key value; shown only in this response */
  key: string
  prefix: string
  created_at: string
  /** The message stream of its sends that name none */
  default_stream?: string
}

/** Query parameters of GET /v1/api-keys. */
export type GetApiKeysQuery = {
  /** Items at most; a page also stops before its JSON would pass OB_API_LIST_MAX_BYTES (1 MB by default), with has_more and next_cursor to continue */
  limit?: number
  cursor?: string
}

/** Response of GET /v1/api-keys. */
export type GetApiKeysResponse = {
  data: {
    id: string
    name: string
    domain_id: string
    permissions: Array<"send" | "read" | "manage" | "admin">
    environment: "live" | "test"
    /** The first 12 characters of the key value */
    prefix: string
    /** The last 4 characters of the key value */
    last4: string
    created_at: string
    revoked_at?: string
    expires_at?: string
    replaced_by?: string
    /** The message stream of its sends that name none */
    default_stream?: string
  }[]
  has_more: boolean
  next_cursor: string | null
}

/** Response of GET /v1/api-keys/{id}. */
export type GetApiKeysByIdResponse = {
  id: string
  name: string
  domain_id: string
  permissions: Array<"send" | "read" | "manage" | "admin">
  environment: "live" | "test"
  /** The first 12 characters of the key value */
  prefix: string
  /** The last 4 characters of the key value */
  last4: string
  created_at: string
  revoked_at?: string
  expires_at?: string
  replaced_by?: string
  /** The message stream of its sends that name none */
  default_stream?: string
}

/** Request body of POST /v1/api-keys/{id}/rotate. */
export type PostApiKeysByIdRotateBody = {
  /** Minutes the old key keeps working; 0 revokes it now */
  grace_period_minutes: number
}

/** Response of POST /v1/api-keys/{id}/rotate. */
export type PostApiKeysByIdRotateResponse = {
  /** Id of the new key */
  id: string
  /** The new key value; shown only in this response */
  key: string
  /** Id of the old key */
  replaces: string
  old_key_expires_at: string
}

/** Request body of POST /v1/domains. */
export type PostDomainsBody = {
  /** The domain to send from, e.g. mail.example.com */
  name: string
}

/** Response of POST /v1/domains. */
export type PostDomainsResponse = {
  id: string
  name: string
  /** lapsed: another organisation verified this name first; this claim cannot verify */
  status: "pending" | "verified" | "lapsed"
  records: {
    type: string
    name: string
    value: string
    /** Found in DNS at the last check (POST /v1/domains/{id}/verify); false until checked */
    verified: boolean
    /** Why the record cannot be published as listed (an MX or CNAME without a host name to name: its value is then empty), why an SPF record cannot be right (mail leaves through a relay OB_SPF does not name), or that a verified domain's SPF record changed since it was found */
    warning?: string
    /** Only on the DKIM record of a key a rotation replaced: listed until then (7 days), after which it may be removed from DNS */
    listed_until?: string
  }[]
  dkim: {
    /** The keys outbound mail is signed with now: the RSA key always, the ed25519 key once its TXT record was found */
    signing: {
      selector: string
      algorithm: "rsa-sha256" | "ed25519-sha256"
    }[]
    /** Keys waiting for their TXT records: they sign from the verification that finds them (a rotation's pair once both are found) */
    pending: {
      selector: string
      algorithm: "rsa-sha256" | "ed25519-sha256"
    }[]
  }
  created_at: string
  verified_at?: string
  /** The domain's own return-path host (PATCH /v1/domains/{id}); absent: bounces.<domain> */
  return_path_host?: {
    host: string
    /** Its DNS records were found: mail uses it from now on */
    verified: boolean
  }
  /** The domain's own tracking host (PATCH /v1/domains/{id}); absent: the host of OB_PUBLIC_URL */
  tracking_host?: {
    host: string
    /** Its DNS records were found: mail uses it from now on */
    verified: boolean
  }
}

/** Query parameters of GET /v1/domains. */
export type GetDomainsQuery = {
  /** Items at most; a page also stops before its JSON would pass OB_API_LIST_MAX_BYTES (1 MB by default), with has_more and next_cursor to continue */
  limit?: number
  cursor?: string
}

/** Response of GET /v1/domains. */
export type GetDomainsResponse = {
  data: {
    id: string
    name: string
    /** lapsed: another organisation verified this name first; this claim cannot verify */
    status: "pending" | "verified" | "lapsed"
    records: {
      type: string
      name: string
      value: string
      /** Found in DNS at the last check (POST /v1/domains/{id}/verify); false until checked */
      verified: boolean
      /** Why the record cannot be published as listed (an MX or CNAME without a host name to name: its value is then empty), why an SPF record cannot be right (mail leaves through a relay OB_SPF does not name), or that a verified domain's SPF record changed since it was found */
      warning?: string
      /** Only on the DKIM record of a key a rotation replaced: listed until then (7 days), after which it may be removed from DNS */
      listed_until?: string
    }[]
    dkim: {
      /** The keys outbound mail is signed with now: the RSA key always, the ed25519 key once its TXT record was found */
      signing: {
        selector: string
        algorithm: "rsa-sha256" | "ed25519-sha256"
      }[]
      /** Keys waiting for their TXT records: they sign from the verification that finds them (a rotation's pair once both are found) */
      pending: {
        selector: string
        algorithm: "rsa-sha256" | "ed25519-sha256"
      }[]
    }
    created_at: string
    verified_at?: string
    /** The domain's own return-path host (PATCH /v1/domains/{id}); absent: bounces.<domain> */
    return_path_host?: {
      host: string
      /** Its DNS records were found: mail uses it from now on */
      verified: boolean
    }
    /** The domain's own tracking host (PATCH /v1/domains/{id}); absent: the host of OB_PUBLIC_URL */
    tracking_host?: {
      host: string
      /** Its DNS records were found: mail uses it from now on */
      verified: boolean
    }
  }[]
  has_more: boolean
  next_cursor: string | null
}

/** Response of GET /v1/domains/{id}. */
export type GetDomainsByIdResponse = {
  id: string
  name: string
  /** lapsed: another organisation verified this name first; this claim cannot verify */
  status: "pending" | "verified" | "lapsed"
  records: {
    type: string
    name: string
    value: string
    /** Found in DNS at the last check (POST /v1/domains/{id}/verify); false until checked */
    verified: boolean
    /** Why the record cannot be published as listed (an MX or CNAME without a host name to name: its value is then empty), why an SPF record cannot be right (mail leaves through a relay OB_SPF does not name), or that a verified domain's SPF record changed since it was found */
    warning?: string
    /** Only on the DKIM record of a key a rotation replaced: listed until then (7 days), after which it may be removed from DNS */
    listed_until?: string
  }[]
  dkim: {
    /** The keys outbound mail is signed with now: the RSA key always, the ed25519 key once its TXT record was found */
    signing: {
      selector: string
      algorithm: "rsa-sha256" | "ed25519-sha256"
    }[]
    /** Keys waiting for their TXT records: they sign from the verification that finds them (a rotation's pair once both are found) */
    pending: {
      selector: string
      algorithm: "rsa-sha256" | "ed25519-sha256"
    }[]
  }
  created_at: string
  verified_at?: string
  /** The domain's own return-path host (PATCH /v1/domains/{id}); absent: bounces.<domain> */
  return_path_host?: {
    host: string
    /** Its DNS records were found: mail uses it from now on */
    verified: boolean
  }
  /** The domain's own tracking host (PATCH /v1/domains/{id}); absent: the host of OB_PUBLIC_URL */
  tracking_host?: {
    host: string
    /** Its DNS records were found: mail uses it from now on */
    verified: boolean
  }
}

/** Request body of PATCH /v1/domains/{id}. */
export type PatchDomainsByIdBody = {
  /** A host name under the domain (rp.example.com) for the envelope sender, instead of bounces.<domain>; null: the default */
  return_path_host?: string | null
  /** A host name under the domain (links.example.com) for open, click and unsubscribe links, instead of the host of OB_PUBLIC_URL; null: the default */
  tracking_host?: string | null
}

/** Response of PATCH /v1/domains/{id}. */
export type PatchDomainsByIdResponse = {
  id: string
  name: string
  /** lapsed: another organisation verified this name first; this claim cannot verify */
  status: "pending" | "verified" | "lapsed"
  records: {
    type: string
    name: string
    value: string
    /** Found in DNS at the last check (POST /v1/domains/{id}/verify); false until checked */
    verified: boolean
    /** Why the record cannot be published as listed (an MX or CNAME without a host name to name: its value is then empty), why an SPF record cannot be right (mail leaves through a relay OB_SPF does not name), or that a verified domain's SPF record changed since it was found */
    warning?: string
    /** Only on the DKIM record of a key a rotation replaced: listed until then (7 days), after which it may be removed from DNS */
    listed_until?: string
  }[]
  dkim: {
    /** The keys outbound mail is signed with now: the RSA key always, the ed25519 key once its TXT record was found */
    signing: {
      selector: string
      algorithm: "rsa-sha256" | "ed25519-sha256"
    }[]
    /** Keys waiting for their TXT records: they sign from the verification that finds them (a rotation's pair once both are found) */
    pending: {
      selector: string
      algorithm: "rsa-sha256" | "ed25519-sha256"
    }[]
  }
  created_at: string
  verified_at?: string
  /** The domain's own return-path host (PATCH /v1/domains/{id}); absent: bounces.<domain> */
  return_path_host?: {
    host: string
    /** Its DNS records were found: mail uses it from now on */
    verified: boolean
  }
  /** The domain's own tracking host (PATCH /v1/domains/{id}); absent: the host of OB_PUBLIC_URL */
  tracking_host?: {
    host: string
    /** Its DNS records were found: mail uses it from now on */
    verified: boolean
  }
}

/** Response of POST /v1/domains/{id}/verify. */
export type PostDomainsByIdVerifyResponse = {
  id: string
  name: string
  /** lapsed: another organisation verified this name first; this claim cannot verify */
  status: "pending" | "verified" | "lapsed"
  records: {
    type: string
    name: string
    value: string
    /** Found in DNS at the last check (POST /v1/domains/{id}/verify); false until checked */
    verified: boolean
    /** Why the record cannot be published as listed (an MX or CNAME without a host name to name: its value is then empty), why an SPF record cannot be right (mail leaves through a relay OB_SPF does not name), or that a verified domain's SPF record changed since it was found */
    warning?: string
    status: "verified" | "missing"
    /** Only on the DKIM record of a key a rotation replaced: listed until then (7 days), after which it may be removed from DNS */
    listed_until?: string
  }[]
  dkim: {
    /** The keys outbound mail is signed with now: the RSA key always, the ed25519 key once its TXT record was found */
    signing: {
      selector: string
      algorithm: "rsa-sha256" | "ed25519-sha256"
    }[]
    /** Keys waiting for their TXT records: they sign from the verification that finds them (a rotation's pair once both are found) */
    pending: {
      selector: string
      algorithm: "rsa-sha256" | "ed25519-sha256"
    }[]
  }
  created_at: string
  verified_at?: string
  /** The domain's own return-path host (PATCH /v1/domains/{id}); absent: bounces.<domain> */
  return_path_host?: {
    host: string
    /** Its DNS records were found: mail uses it from now on */
    verified: boolean
  }
  /** The domain's own tracking host (PATCH /v1/domains/{id}); absent: the host of OB_PUBLIC_URL */
  tracking_host?: {
    host: string
    /** Its DNS records were found: mail uses it from now on */
    verified: boolean
  }
}

/** Response of POST /v1/domains/{id}/dkim/rotate. */
export type PostDomainsByIdDkimRotateResponse = {
  id: string
  name: string
  /** lapsed: another organisation verified this name first; this claim cannot verify */
  status: "pending" | "verified" | "lapsed"
  records: {
    type: string
    name: string
    value: string
    /** Found in DNS at the last check (POST /v1/domains/{id}/verify); false until checked */
    verified: boolean
    /** Why the record cannot be published as listed (an MX or CNAME without a host name to name: its value is then empty), why an SPF record cannot be right (mail leaves through a relay OB_SPF does not name), or that a verified domain's SPF record changed since it was found */
    warning?: string
    /** Only on the DKIM record of a key a rotation replaced: listed until then (7 days), after which it may be removed from DNS */
    listed_until?: string
  }[]
  dkim: {
    /** The keys outbound mail is signed with now: the RSA key always, the ed25519 key once its TXT record was found */
    signing: {
      selector: string
      algorithm: "rsa-sha256" | "ed25519-sha256"
    }[]
    /** Keys waiting for their TXT records: they sign from the verification that finds them (a rotation's pair once both are found) */
    pending: {
      selector: string
      algorithm: "rsa-sha256" | "ed25519-sha256"
    }[]
  }
  created_at: string
  verified_at?: string
  /** The domain's own return-path host (PATCH /v1/domains/{id}); absent: bounces.<domain> */
  return_path_host?: {
    host: string
    /** Its DNS records were found: mail uses it from now on */
    verified: boolean
  }
  /** The domain's own tracking host (PATCH /v1/domains/{id}); absent: the host of OB_PUBLIC_URL */
  tracking_host?: {
    host: string
    /** Its DNS records were found: mail uses it from now on */
    verified: boolean
  }
}

/** Response of GET /v1/domains/{id}/health. */
export type GetDomainsByIdHealthResponse = {
  domain_id: string
  domain: string
  /** The worst item's status; not_checked only when no item could be checked */
  status: "ok" | "warning" | "error" | "not_checked"
  /** When the look-ups were made (answers are reused for up to a minute) */
  checked_at: string
  items: {
    /** What the item looks at (docs/domain-health.md) */
    check: "spf" | "dkim" | "dmarc" | "return_path_spf" | "return_path_mx" | "tracking_cname" | "mta_sts" | "tls_rpt" | "reverse_dns" | "blocklist" | "record"
    /** The DNS name looked up, or the egress source's address (reverse_dns, blocklist) */
    subject: string
    /** ok; warning (works, but a receiver may judge it); error (mail fails a check at receivers); not_checked (a look-up failed or there is nothing to look up) */
    status: "ok" | "warning" | "error" | "not_checked"
    /** What was found, and what to do about it */
    message: string
  }[]
}

/** Query parameters of GET /v1/domains/{id}/dmarc. */
export type GetDomainsByIdDmarcQuery = {
  /** A UTC day, YYYY-MM-DD */
  from?: string
  /** A UTC day, YYYY-MM-DD, included; default today */
  to?: string
}

/** Response of GET /v1/domains/{id}/dmarc. */
export type GetDomainsByIdDmarcResponse = {
  domain_id: string
  domain: string
  /** The address to name in the DMARC record's rua=, mailto: included */
  rua: string
  /** First day of the range, YYYY-MM-DD */
  from: string
  /** Last day of the range, YYYY-MM-DD, included */
  to: string
  /** The days of the range that have reports, oldest first */
  days: {
    /** The UTC day the reports' date ranges begin on, YYYY-MM-DD */
    date: string
    /** Reports received about the day */
    reports: number
    /** Who reported, most reports first (the 50 first reporters of a day by name, the rest as `other`) */
    reporters: {
      /** org_name of the report */
      name: string
      /** Its reports */
      reports: number
    }[]
    /** Messages the reports count */
    messages: number
    spf: {
      /** Messages whose SPF check passed */
      pass: number
      /** Messages whose SPF passed and aligned with From */
      aligned: number
    }
    dkim: {
      /** Messages with at least one DKIM signature that verified */
      pass: number
      /** Messages whose DKIM passed and aligned with From */
      aligned: number
    }
    dmarc: {
      /** Messages that passed DMARC (aligned SPF or aligned DKIM) */
      pass: number
      /** Messages that did not */
      fail: number
    }
    /** What the receivers did with the messages (policy_evaluated disposition) */
    disposition: {
      /** Messages delivered with no action */
      none: number
      /** Messages sent to spam */
      quarantine: number
      /** Messages refused */
      reject: number
    }
    /** Sending addresses, most messages first (at most 200 a day) */
    sources: {
      /** The sending address the receivers saw (row source_ip) */
      ip: string
      /** Messages from it */
      messages: number
      /** Of them, messages that passed DMARC (aligned SPF or aligned DKIM) */
      dmarc_pass: number
    }[]
    /** The sources past the 200 kept for the day, added up */
    other_sources?: {
      /** Messages */
      messages: number
      /** Of them, DMARC passes */
      dmarc_pass: number
    }
  }[]
}

/** Request body of POST /v1/webhooks. */
export type PostWebhooksBody = {
  /** An https:// URL without credentials */
  url: string
  /** `inbound` and `inbound.received` both subscribe to inbound.received events */
  events: Array<"delivered" | "bounced" | "deferred" | "opened" | "clicked" | "unsubscribed" | "complained" | "inbound" | "inbound.received" | "domain.health_changed" | "stream.paused" | "stream.resumed">
  /** Every kind is optional; an event must match each kind given (AND), and any one value within a kind (OR). On PATCH, replaces the filters whole (`{}` removes them). */
  filters?: {
    /** Any of these message tags (at most 20); events without tags do not match */
    tags?: string[]
    /** Any of these sending domains of the organisation (at most 20); events without a sending domain (inbound.received) do not match */
    domains?: string[]
    /** Any of these message streams (`transactional` or broadcast stream ids); events of no message (inbound.received, domain.health_changed) do not match */
    streams?: string[]
    /** `live` (sent with ob_live_ keys, and every event of no message), `test` (sandbox) or `all` (the default) */
    environment?: "live" | "test" | "all"
  }
}

/** Response of POST /v1/webhooks. */
export type PostWebhooksResponse = {
  id: string
  url: string
  events: string[]
  /** Every kind is optional; an event must match each kind given (AND), and any one value within a kind (OR). On PATCH, replaces the filters whole (`{}` removes them). */
  filters: {
    /** Any of these message tags (at most 20); events without tags do not match */
    tags?: string[]
    /** Any of these sending domains of the organisation (at most 20); events without a sending domain (inbound.received) do not match */
    domains?: string[]
    /** Any of these message streams (`transactional` or broadcast stream ids); events of no message (inbound.received, domain.health_changed) do not match */
    streams?: string[]
    /** `live` (sent with ob_live_ keys, and every event of no message), `test` (sandbox) or `all` (the default) */
    environment?: "live" | "test" | "all"
  }
  /** whsec_…; shown only in this response */
  secret: string
  status: "active" | "paused" | "failed"
  created_at: string
  updated_at: string
}

/** Query parameters of GET /v1/webhooks. */
export type GetWebhooksQuery = {
  /** Items at most; a page also stops before its JSON would pass OB_API_LIST_MAX_BYTES (1 MB by default), with has_more and next_cursor to continue */
  limit?: number
  cursor?: string
}

/** Response of GET /v1/webhooks. */
export type GetWebhooksResponse = {
  data: {
    id: string
    url: string
    events: string[]
    /** Every kind is optional; an event must match each kind given (AND), and any one value within a kind (OR). On PATCH, replaces the filters whole (`{}` removes them). */
    filters: {
      /** Any of these message tags (at most 20); events without tags do not match */
      tags?: string[]
      /** Any of these sending domains of the organisation (at most 20); events without a sending domain (inbound.received) do not match */
      domains?: string[]
      /** Any of these message streams (`transactional` or broadcast stream ids); events of no message (inbound.received, domain.health_changed) do not match */
      streams?: string[]
      /** `live` (sent with ob_live_ keys, and every event of no message), `test` (sandbox) or `all` (the default) */
      environment?: "live" | "test" | "all"
    }
    status: "active" | "paused" | "failed"
    created_at: string
    updated_at: string
  }[]
  has_more: boolean
  next_cursor: string | null
}

/** Response of GET /v1/webhooks/{id}. */
export type GetWebhooksByIdResponse = {
  id: string
  url: string
  events: string[]
  /** Every kind is optional; an event must match each kind given (AND), and any one value within a kind (OR). On PATCH, replaces the filters whole (`{}` removes them). */
  filters: {
    /** Any of these message tags (at most 20); events without tags do not match */
    tags?: string[]
    /** Any of these sending domains of the organisation (at most 20); events without a sending domain (inbound.received) do not match */
    domains?: string[]
    /** Any of these message streams (`transactional` or broadcast stream ids); events of no message (inbound.received, domain.health_changed) do not match */
    streams?: string[]
    /** `live` (sent with ob_live_ keys, and every event of no message), `test` (sandbox) or `all` (the default) */
    environment?: "live" | "test" | "all"
  }
  status: "active" | "paused" | "failed"
  created_at: string
  updated_at: string
}

/** Request body of PATCH /v1/webhooks/{id}. */
export type PatchWebhooksByIdBody = {
  /** An https:// URL without credentials */
  url?: string
  /** `inbound` and `inbound.received` both subscribe to inbound.received events */
  events?: Array<"delivered" | "bounced" | "deferred" | "opened" | "clicked" | "unsubscribed" | "complained" | "inbound" | "inbound.received" | "domain.health_changed" | "stream.paused" | "stream.resumed">
  /** Every kind is optional; an event must match each kind given (AND), and any one value within a kind (OR). On PATCH, replaces the filters whole (`{}` removes them). */
  filters?: {
    /** Any of these message tags (at most 20); events without tags do not match */
    tags?: string[]
    /** Any of these sending domains of the organisation (at most 20); events without a sending domain (inbound.received) do not match */
    domains?: string[]
    /** Any of these message streams (`transactional` or broadcast stream ids); events of no message (inbound.received, domain.health_changed) do not match */
    streams?: string[]
    /** `live` (sent with ob_live_ keys, and every event of no message), `test` (sandbox) or `all` (the default) */
    environment?: "live" | "test" | "all"
  }
  /** `active` also revives a failed webhook */
  status?: "active" | "paused"
}

/** Response of PATCH /v1/webhooks/{id}. */
export type PatchWebhooksByIdResponse = {
  id: string
  url: string
  events: string[]
  /** Every kind is optional; an event must match each kind given (AND), and any one value within a kind (OR). On PATCH, replaces the filters whole (`{}` removes them). */
  filters: {
    /** Any of these message tags (at most 20); events without tags do not match */
    tags?: string[]
    /** Any of these sending domains of the organisation (at most 20); events without a sending domain (inbound.received) do not match */
    domains?: string[]
    /** Any of these message streams (`transactional` or broadcast stream ids); events of no message (inbound.received, domain.health_changed) do not match */
    streams?: string[]
    /** `live` (sent with ob_live_ keys, and every event of no message), `test` (sandbox) or `all` (the default) */
    environment?: "live" | "test" | "all"
  }
  status: "active" | "paused" | "failed"
  created_at: string
  updated_at: string
}

/** Request body of POST /v1/templates. */
export type PostTemplatesBody = {
  name: string
  /** {{var}} placeholders are filled as plain text */
  subject: string
  /** {{var}} placeholders are filled HTML-escaped */
  html: string
  /** {{var}} placeholders are filled as plain text */
  text?: string
}

/** Response of POST /v1/templates. */
export type PostTemplatesResponse = {
  id: string
  name: string
  subject: string
  html: string
  text?: string
  /** Placeholder names the template uses */
  variables: string[]
  created_at: string
  updated_at: string
}

/** Query parameters of GET /v1/templates. */
export type GetTemplatesQuery = {
  /** Items at most; a page also stops before its JSON would pass OB_API_LIST_MAX_BYTES (1 MB by default), with has_more and next_cursor to continue */
  limit?: number
  cursor?: string
}

/** Response of GET /v1/templates. */
export type GetTemplatesResponse = {
  data: {
    id: string
    name: string
    subject: string
    html: string
    text?: string
    /** Placeholder names the template uses */
    variables: string[]
    created_at: string
    updated_at: string
  }[]
  has_more: boolean
  next_cursor: string | null
}

/** Response of GET /v1/templates/{id}. */
export type GetTemplatesByIdResponse = {
  id: string
  name: string
  subject: string
  html: string
  text?: string
  /** Placeholder names the template uses */
  variables: string[]
  created_at: string
  updated_at: string
}

/** Request body of PATCH /v1/templates/{id}. */
export type PatchTemplatesByIdBody = {
  name?: string
  /** {{var}} placeholders are filled as plain text */
  subject?: string
  /** {{var}} placeholders are filled HTML-escaped */
  html?: string
  /** null removes the plain-text part */
  text?: string | null
}

/** Response of PATCH /v1/templates/{id}. */
export type PatchTemplatesByIdResponse = {
  id: string
  name: string
  subject: string
  html: string
  text?: string
  /** Placeholder names the template uses */
  variables: string[]
  created_at: string
  updated_at: string
}

/** Response of GET /v1/streams. */
export type GetStreamsResponse = {
  data: {
    /** `transactional`, or the id the broadcast stream was created with */
    id: string
    type: "transactional" | "broadcast"
    name: string
    description?: string
    /** Absent on the transactional stream */
    created_at?: string
    updated_at?: string
  }[]
  has_more: boolean
  next_cursor: null
}

/** Request body of POST /v1/streams. */
export type PostStreamsBody = {
  /** A message stream of the organisation: `transactional` (the default) or a broadcast stream's id */
  id: string
  name: string
  description?: string
}

/** Response of POST /v1/streams. */
export type PostStreamsResponse = {
  /** `transactional`, or the id the broadcast stream was created with */
  id: string
  type: "transactional" | "broadcast"
  name: string
  description?: string
  /** Absent on the transactional stream */
  created_at?: string
  updated_at?: string
}

/** Response of GET /v1/streams/{stream}. */
export type GetStreamsByStreamResponse = {
  /** `transactional`, or the id the broadcast stream was created with */
  id: string
  type: "transactional" | "broadcast"
  name: string
  description?: string
  /** Absent on the transactional stream */
  created_at?: string
  updated_at?: string
}

/** Request body of PATCH /v1/streams/{stream}. */
export type PatchStreamsByStreamBody = {
  name?: string
  /** null removes the description */
  description?: string | null
}

/** Response of PATCH /v1/streams/{stream}. */
export type PatchStreamsByStreamResponse = {
  /** `transactional`, or the id the broadcast stream was created with */
  id: string
  type: "transactional" | "broadcast"
  name: string
  description?: string
  /** Absent on the transactional stream */
  created_at?: string
  updated_at?: string
}

/** Response of GET /v1/billing. */
export type GetBillingResponse = {
  plan: "free" | "starter" | "pro" | "enterprise"
  rate_limit_per_minute: number
}

/** Request body of PATCH /v1/billing. */
export type PatchBillingBody = {
  /** free 60, starter 300, pro 1000 requests per minute per key; enterprise as set by the operator. The current plan or a lower one */
  plan: "free" | "starter" | "pro" | "enterprise"
}

/** Response of PATCH /v1/billing. */
export type PatchBillingResponse = {
  plan: "free" | "starter" | "pro" | "enterprise"
  rate_limit_per_minute: number
}

/** Query parameters of GET /v1/suppressions. */
export type GetSuppressionsQuery = {
  /** Items at most; a page also stops before its JSON would pass OB_API_LIST_MAX_BYTES (1 MB by default), with has_more and next_cursor to continue */
  limit?: number
  cursor?: string
  /** Only this address (case-insensitive) */
  email?: string
  /** Only entries of this reason */
  reason?: "hard_bounce" | "complaint" | "unsubscribe" | "manual"
  /** Only entries created at or after this ISO 8601 date-time */
  since?: string
  /** Only entries created before this ISO 8601 date-time */
  until?: string
  /** Only entries that suppress sends on this message stream: those for every stream and the stream's own. A stream the organisation has, or a deleted one of which messages, events or suppressions are still stored; any other is 422 `stream_not_found` naming `stream` */
  stream?: string
  /** `live` (default) or `test`: sandbox traffic (sent with an `ob_test_` key) is shown only with `test` */
  environment?: "live" | "test"
}

/** Response of GET /v1/suppressions. */
export type GetSuppressionsResponse = {
  data: {
    email: string
    reason: "hard_bounce" | "complaint" | "unsubscribe" | "manual"
    message_id?: string
    created_at: string
    /** After this instant the entry no longer suppresses (manual entries only) */
    expires_at?: string
    /** The broadcast stream the entry suppresses alone (an unsubscribe or complaint of its mail); absent: every stream */
    stream?: string
  }[]
  has_more: boolean
  next_cursor: string | null
}

/** Request body of POST /v1/suppressions. */
export type PostSuppressionsBody = {
  email: string
  /** ISO 8601 date-time in the future after which the entry no longer suppresses */
  expires_at?: string
}

/** Response of POST /v1/suppressions. */
export type PostSuppressionsResponse = {
  email: string
  reason: "hard_bounce" | "complaint" | "unsubscribe" | "manual"
  message_id?: string
  created_at: string
  /** After this instant the entry no longer suppresses (manual entries only) */
  expires_at?: string
  /** The broadcast stream the entry suppresses alone (an unsubscribe or complaint of its mail); absent: every stream */
  stream?: string
}

/** Query parameters of GET /v1/suppressions/export. */
export type GetSuppressionsExportQuery = {
  /** Only entries of this reason */
  reason?: "hard_bounce" | "complaint" | "unsubscribe" | "manual"
  /** Only entries created at or after this ISO 8601 date-time */
  since?: string
  /** Only entries created before this ISO 8601 date-time */
  until?: string
  /** Only entries that suppress sends on this message stream: those for every stream and the stream's own. A stream the organisation has, or a deleted one of which messages, events or suppressions are still stored; any other is 422 `stream_not_found` naming `stream` */
  stream?: string
  /** `live` (default) or `test`: sandbox traffic (sent with an `ob_test_` key) is shown only with `test` */
  environment?: "live" | "test"
}

/** Request body of POST /v1/suppressions/import. */
export type PostSuppressionsImportBody = {
  addresses: {
    email: string
    /** Default manual */
    reason?: "hard_bounce" | "complaint" | "unsubscribe" | "manual"
    /** ISO 8601 date-time in the future; reason manual only */
    expires_at?: string
    /** A message stream of the organisation: a broadcast stream's id makes the entry that stream's own; absent, empty or `transactional`: every stream. A stream the organisation does not have refuses the line, and so does a broadcast stream with reason `hard_bounce` (a hard bounce suppresses every stream) */
    stream?: string
  }[]
}

/** Response of POST /v1/suppressions/import. */
export type PostSuppressionsImportResponse = {
  /** Addresses added */
  imported: number
  /** Addresses already on the list (or given twice), left as they were */
  already_suppressed: number
  /** Lines refused */
  refused_count: number
  /** The first 1000 refused lines */
  refused: {
    /** CSV line (the header is line 1), or position in addresses (from 1) */
    line: number
    email: string
    /** Why the line was refused */
    reason: string
  }[]
  imported_by_reason: {
    hard_bounce: number
    complaint: number
    unsubscribe: number
    manual: number
  }
}

/** Query parameters of DELETE /v1/suppressions/{email}. */
export type DeleteSuppressionsByEmailQuery = {
  /** A message stream of the organisation: `transactional` (the default) or a broadcast stream's id */
  stream?: string
}

/** Request body of POST /v1/inbound/routes. */
export type PostInboundRoutesBody = {
  /** "addr@domain" or "*@domain" (any address of the domain); compared case-insensitively. The domain must be registered to the organisation (POST /v1/domains), and be the key's own domain unless the key has admin */
  match: string
  action: {
    type: "webhook"
    include_attachments: boolean
  }
}

/** Response of POST /v1/inbound/routes. */
export type PostInboundRoutesResponse = {
  id: string
  match: string
  action: {
    type: "webhook"
    include_attachments: boolean
  }
  created_at: string
}

/** Query parameters of GET /v1/inbound/routes. */
export type GetInboundRoutesQuery = {
  /** Items at most; a page also stops before its JSON would pass OB_API_LIST_MAX_BYTES (1 MB by default), with has_more and next_cursor to continue */
  limit?: number
  cursor?: string
}

/** Response of GET /v1/inbound/routes. */
export type GetInboundRoutesResponse = {
  data: {
    id: string
    match: string
    action: {
      type: "webhook"
      include_attachments: boolean
    }
    created_at: string
  }[]
  has_more: boolean
  next_cursor: string | null
}

/** Response of GET /v1/inbound/routes/{id}. */
export type GetInboundRoutesByIdResponse = {
  id: string
  match: string
  action: {
    type: "webhook"
    include_attachments: boolean
  }
  created_at: string
}

/** Response of GET /v1/whoami. */
export type GetWhoamiResponse = {
  /** Id of the API key that made the request */
  key_id: string
  key_name: string
  permissions: string[]
  environment: "live" | "test"
  organization_id: string
  domain_id: string
  /** The domain the key sends from */
  domain: string
  plan: string
  /** Requests per minute this key may make */
  rate_limit_per_minute: number
}

/** Query parameters of GET /v1/messages. */
export type GetMessagesQuery = {
  /** Items at most; a page also stops before its JSON would pass OB_API_LIST_MAX_BYTES (1 MB by default), with has_more and next_cursor to continue */
  limit?: number
  cursor?: string
  status?: "queued" | "scheduled" | "sending" | "delivered" | "deferred" | "bounced" | "complained" | "failed" | "canceled"
  /** Recipient address prefix (to, cc or bcc), case-insensitive; `Name <address>` stands for the address */
  to?: string
  /** `live` (default) or `test`: sandbox traffic (sent with an `ob_test_` key) is shown only with `test` */
  environment?: "live" | "test"
  /** 1 to 64 of A-Z a-z 0-9 _ - */
  tag?: string
  /** A message stream of the organisation: `transactional` (the default) or a broadcast stream's id */
  stream?: string
  /** `true` keeps only stuck messages (see `stuck`), most recently due first; `false` (the default) keeps all */
  stuck?: "true" | "false"
}

/** Response of GET /v1/messages. */
export type GetMessagesResponse = {
  data: {
    id: string
    from: string
    to: string[]
    cc: string[]
    bcc: string[]
    /** As the recipients see it: a template's subject is rendered with the variables */
    subject: string
    status: "queued" | "scheduled" | "sending" | "delivered" | "deferred" | "bounced" | "complained" | "failed" | "canceled"
    environment: "live" | "test"
    created_at: string
    scheduled_at?: string
    metadata: {
      [key: string]: string
    }
    /** Distinct recipients of the request (to, cc and bcc), suppressed ones included */
    recipient_count: number
    /** Recipients delivered so far (complained ones included) */
    delivered_count: number
    /** the tags given at send (empty when none) */
    tags: string[]
    /** The message stream it was sent on (`transactional` or a broadcast stream's id) */
    stream: string
    /** When the next delivery attempt is due, for a message waiting for one: queued or scheduled (its `scheduled_at`, else `created_at`); deferred, or in any status while one of its recipients is deferred (the `next_attempt_at` of its latest `deferred` event); sending (as deferred when a recipient was deferred before, else as queued). Absent once every recipient has an outcome. */
    next_attempt_at?: string
    /** `true` when `next_attempt_at` passed more than the grace ago (OB_STUCK_AFTER_MS, default 5 minutes) without an attempt (most often no engine is delivering the message). Worked out when read; `false` again once an attempt moves the message on. */
    stuck: boolean
    /** Open events of the message so far (every recipient's; 0 without tracking) */
    opened_count: number
    /** Click events of the message so far (every recipient's) */
    clicked_count: number
    /** When a recipient bounced: the latest bounce's SMTP code and reply (`550 5.1.1 mailbox unknown`), at most 300 characters */
    bounce_reason?: string
  }[]
  has_more: boolean
  next_cursor: string | null
}

/** Response of GET /v1/messages/{id}. */
export type GetMessagesByIdResponse = {
  id: string
  from: string
  to: string[]
  cc: string[]
  bcc: string[]
  /** As the recipients see it: a template's subject is rendered with the variables */
  subject: string
  status: "queued" | "scheduled" | "sending" | "delivered" | "deferred" | "bounced" | "complained" | "failed" | "canceled"
  environment: "live" | "test"
  created_at: string
  scheduled_at?: string
  metadata: {
    [key: string]: string
  }
  /** Distinct recipients of the request (to, cc and bcc), suppressed ones included */
  recipient_count: number
  /** Recipients delivered so far (complained ones included) */
  delivered_count: number
  /** the tags given at send (empty when none) */
  tags: string[]
  /** The message stream it was sent on (`transactional` or a broadcast stream's id) */
  stream: string
  /** When the next delivery attempt is due, for a message waiting for one: queued or scheduled (its `scheduled_at`, else `created_at`); deferred, or in any status while one of its recipients is deferred (the `next_attempt_at` of its latest `deferred` event); sending (as deferred when a recipient was deferred before, else as queued). Absent once every recipient has an outcome. */
  next_attempt_at?: string
  /** `true` when `next_attempt_at` passed more than the grace ago (OB_STUCK_AFTER_MS, default 5 minutes) without an attempt (most often no engine is delivering the message). Worked out when read; `false` again once an attempt moves the message on. */
  stuck: boolean
  /** Open events of the message so far (every recipient's; 0 without tracking) */
  opened_count: number
  /** Click events of the message so far (every recipient's) */
  clicked_count: number
  /** When a recipient bounced: the latest bounce's SMTP code and reply (`550 5.1.1 mailbox unknown`), at most 300 characters */
  bounce_reason?: string
  recipients: {
    /** Bare address, lower-cased */
    address: string
    /** The recipient's own status; `suppressed`: skipped at the send, the address being on the suppression list */
    status: "queued" | "scheduled" | "deferred" | "delivered" | "bounced" | "failed" | "complained" | "suppressed"
    /** Why a `suppressed` recipient is on the list: hard_bounce, complaint, unsubscribe or manual */
    reason?: string
    /** Delivery attempts that ended (delivered, deferred, bounced or failed) */
    attempts: number
    /** Latest event about this recipient; null before any */
    last_event_at: string | null
  }[]
  events: {
    /** evt_…, unique per event; the same id as the webhook delivery */
    id: string
    type: string
    timestamp: string
    /** The fields of the event type (docs/webhooks.md). `bounced`: `bounce_type` (`hard` or `soft`), `bounce_code`, `bounce_message`, `bounce_category` (`mailbox`, `domain`, `policy`, `content`, `size`, `mailbox_full`, `other` or `operator`; only `mailbox` and `domain` suppress the address) and `bounced_at`. */
    data: {
      [key: string]: unknown
    }
  }[]
}

/** Request body of PATCH /v1/messages/{id}. */
export type PatchMessagesByIdBody = {
  /** The new time: at most 72 hours ahead; up to 60 s in the past means now */
  scheduled_at: string
}

/** Response of PATCH /v1/messages/{id}. */
export type PatchMessagesByIdResponse = {
  id: string
  status: "scheduled"
  scheduled_at: string
}

/** Response of GET /v1/messages/{id}/content. */
export type GetMessagesByIdContentResponse = {
  id: string
  /** As sent: a template's subject rendered with the variables */
  subject: string
  from: string
  to: string[]
  cc: string[]
  /** null when none was given */
  reply_to: string | null
  /** The HTML part as rendered for sending, before the per-recipient open pixel and click links; null when none */
  html: string | null
  /** The text part; null when none */
  text: string | null
  /** The custom headers given at send (SMTP submission: the submitted header lines other than the addressing, subject, date, Message-ID and MIME ones) */
  headers: {
    [key: string]: string
  }
  /** What was attached; the attachment bytes are not kept, except those of small inline images (`data`) */
  attachments: {
    filename: string
    /** As sent: the one given, else the one the file name implies */
    content_type: string
    /** Decoded bytes */
    size: number
    /** The Content-ID of an inline attachment (without angle brackets), else null */
    content_id: string | null
    /** An inline image (a Content-ID and a PNG, JPEG, GIF or WebP type) of at most 256 KB, within 1 MB for all of the message's: its bytes in base64, so that the HTML's `cid:` image can be shown. Absent for every other attachment */
    data?: string
  }[]
}

/** Query parameters of GET /v1/events. */
export type GetEventsQuery = {
  /** Items at most; a page also stops before its JSON would pass OB_API_LIST_MAX_BYTES (1 MB by default), with has_more and next_cursor to continue */
  limit?: number
  cursor?: string
  message_id?: string
  type?: "delivered" | "bounced" | "deferred" | "opened" | "clicked" | "unsubscribed" | "complained" | "inbound.received" | "failed" | "domain.health_changed" | "stream.paused" | "stream.resumed"
  /** `live` (default) or `test`: sandbox traffic (sent with an `ob_test_` key) is shown only with `test` */
  environment?: "live" | "test"
  /** 1 to 64 of A-Z a-z 0-9 _ - */
  tag?: string
  /** A message stream of the organisation: `transactional` (the default) or a broadcast stream's id */
  stream?: string
}

/** Response of GET /v1/events. */
export type GetEventsResponse = {
  data: {
    /** evt_…, unique per event; the same id as the webhook delivery */
    id: string
    type: string
    timestamp: string
    /** The fields of the event type (docs/webhooks.md). `bounced`: `bounce_type` (`hard` or `soft`), `bounce_code`, `bounce_message`, `bounce_category` (`mailbox`, `domain`, `policy`, `content`, `size`, `mailbox_full`, `other` or `operator`; only `mailbox` and `domain` suppress the address) and `bounced_at`. */
    data: {
      [key: string]: unknown
    }
  }[]
  has_more: boolean
  next_cursor: string | null
}

/** Query parameters of GET /v1/stats. */
export type GetStatsQuery = {
  /** ISO 8601; default `to` minus 7 days */
  from?: string
  /** ISO 8601, exclusive; default now */
  to?: string
  /** also return `series` per hour or UTC day */
  interval?: "hour" | "day"
  /** `live` (default) or `test`: sandbox traffic (sent with an `ob_test_` key) is shown only with `test` */
  environment?: "live" | "test"
  /** 1 to 64 of A-Z a-z 0-9 _ - */
  tag?: string
  /** A message stream of the organisation: `transactional` (the default) or a broadcast stream's id */
  stream?: string
}

/** Response of GET /v1/stats. */
export type GetStatsResponse = {
  from: string
  to: string
  interval?: "hour" | "day"
  counts: {
    sent: number
    delivered: number
    bounced: number
    deferred: number
    opened: number
    clicked: number
    unsubscribed: number
    complained: number
  }
  series?: {
    start: string
    counts: {
      sent: number
      delivered: number
      bounced: number
      deferred: number
      opened: number
      clicked: number
      unsubscribed: number
      complained: number
    }
  }[]
}

/** Response of GET /v1/reputation. */
export type GetReputationResponse = {
  /** `off`: rates are counted, no stream is paused */
  guard: "on" | "off"
  window_hours: number
  thresholds: {
    /** a fraction: 0.003 is 0.3 % */
    complaint_rate: number
    /** a fraction: 0.003 is 0.3 % */
    bounce_rate: number
    min_volume: number
  }
  streams: {
    stream: string
    status: "active" | "paused"
    counts: {
      delivered: number
      hard_bounced: number
      complained: number
    }
    rates: {
      /** delivered + hard_bounced */
      volume: number
      /** a fraction: 0.003 is 0.3 % */
      bounce_rate: number
      /** a fraction: 0.003 is 0.3 % */
      complaint_rate: number
    }
    paused?: {
      reason: "complaint_rate" | "bounce_rate"
      paused_at: string
      counts: {
        delivered: number
        hard_bounced: number
        complained: number
      }
      rates: {
        /** delivered + hard_bounced */
        volume: number
        /** a fraction: 0.003 is 0.3 % */
        bounce_rate: number
        /** a fraction: 0.003 is 0.3 % */
        complaint_rate: number
      }
    }
  }[]
}

/** Response of POST /v1/reputation/streams/{stream}/resume. */
export type PostReputationStreamsByStreamResumeResponse = {
  stream: string
  status: "active"
  resumed_at: string
  paused_at: string
}

/** Request body of POST /v1/webhooks/{id}/test. */
export type PostWebhooksByIdTestBody = {
  /** `inbound` sends an `inbound.received` event */
  type: "delivered" | "bounced" | "deferred" | "opened" | "clicked" | "unsubscribed" | "complained" | "inbound" | "inbound.received" | "domain.health_changed" | "stream.paused" | "stream.resumed"
}

/** Response of POST /v1/webhooks/{id}/test. */
export type PostWebhooksByIdTestResponse = {
  event_id: string
}

/** Query parameters of GET /v1/webhooks/{id}/deliveries. */
export type GetWebhooksByIdDeliveriesQuery = {
  /** Items at most; a page also stops before its JSON would pass OB_API_LIST_MAX_BYTES (1 MB by default), with has_more and next_cursor to continue */
  limit?: number
  cursor?: string
}

/** Response of GET /v1/webhooks/{id}/deliveries. */
export type GetWebhooksByIdDeliveriesResponse = {
  data: {
    id: string
    event_id: string
    event_type: string
    attempt: number
    status_code: number | null
    duration_ms: number
    error: string | null
    at: string
    /** A test event (`POST /v1/webhooks/{id}/test`): not stored as an event, so it cannot be replayed */
    test: boolean
    /** The first 2,048 characters of the body sent, for an attempt that did not succeed and for a test event; null for a successful attempt (its body is the event, `GET /v1/events/{id}`) */
    request_body: string | null
    /** The first 1,024 bytes of the response body (as UTF-8); null when no response came */
    response_body: string | null
  }[]
  has_more: boolean
  next_cursor: string | null
}

/** Request body of POST /v1/webhooks/{id}/rotate-secret. */
export type PostWebhooksByIdRotateSecretBody = {
  /** How long the previous secret keeps signing requests as well (0 to 10080, 7 days); 0 ends it at once */
  grace_period_minutes: number
}

/** Response of POST /v1/webhooks/{id}/rotate-secret. */
export type PostWebhooksByIdRotateSecretResponse = {
  /** The new signing secret (`whsec_` + base64 text); returned only in this response */
  secret: string
  /** Until then every request also carries a signature made with the previous secret */
  previous_secret_expires_at: string
}

/** Request body of POST /v1/webhooks/{id}/replay. */
export type PostWebhooksByIdReplayBody = {
  event_id: string
}

/** Response of POST /v1/webhooks/{id}/replay. */
export type PostWebhooksByIdReplayResponse = {
  event_id: string
}

/** Request body of POST /v1/webhooks/{id}/recover. */
export type PostWebhooksByIdRecoverBody = {
  since: string
}

/** Response of POST /v1/webhooks/{id}/recover. */
export type PostWebhooksByIdRecoverResponse = {
  /** How many events were queued */
  events: number
}

/** Request body of POST /v1/messages/send. */
export type PostMessagesSendBody = {
  /** addr@domain or "Display Name <addr@domain>" */
  from: string
  to: string | string[]
  cc?: string | string[]
  bcc?: string | string[]
  /** addr@domain or "Display Name <addr@domain>" */
  reply_to?: string
  subject?: string
  html?: string
  text?: string
  headers?: {
    [key: string]: string
  }
  metadata?: {
    [key: string]: string
  }
  attachments?: {
    filename: string
    /** base64 */
    content: string
    content_type?: string
    /** Sends the attachment inline (Content-Disposition: inline, Content-ID: <content_id>) next to the HTML, which shows it with src="cid:<content_id>"; unique within the message */
    content_id?: string
  }[]
  template_id?: string
  variables?: {
    [key: string]: string | number | boolean
  }
  /** Only with template_id: render placeholders the variables do not give as blanks instead of refusing the send (422) */
  allow_missing_variables?: boolean
  scheduled_at?: string
  track_opens?: boolean
  track_clicks?: boolean
  /** at most 10 tags, echoed in every event's data.tags */
  tags?: string[]
  /** A message stream of the organisation: `transactional` (the default) or a broadcast stream's id */
  stream?: string
}

/** Response of POST /v1/messages/send. */
export type PostMessagesSendResponse = {
  /** msg_… id of the queued message */
  id: string
  status: "queued" | "scheduled"
  created_at: string
  /** Recipients skipped because they are on the suppression list */
  suppressed?: string[]
}

/** Request body of POST /v1/messages/batch. */
export type PostMessagesBatchBody = {
  messages: {
    /** addr@domain or "Display Name <addr@domain>" */
    from: string
    to: string | string[]
    cc?: string | string[]
    bcc?: string | string[]
    /** addr@domain or "Display Name <addr@domain>" */
    reply_to?: string
    subject?: string
    html?: string
    text?: string
    headers?: {
      [key: string]: string
    }
    metadata?: {
      [key: string]: string
    }
    attachments?: {
      filename: string
      /** base64 */
      content: string
      content_type?: string
      /** Sends the attachment inline (Content-Disposition: inline, Content-ID: <content_id>) next to the HTML, which shows it with src="cid:<content_id>"; unique within the message */
      content_id?: string
    }[]
    template_id?: string
    variables?: {
      [key: string]: string | number | boolean
    }
    /** Only with template_id: render placeholders the variables do not give as blanks instead of refusing the send (422) */
    allow_missing_variables?: boolean
    scheduled_at?: string
    track_opens?: boolean
    track_clicks?: boolean
    /** at most 10 tags, echoed in every event's data.tags */
    tags?: string[]
    /** A message stream of the organisation: `transactional` (the default) or a broadcast stream's id */
    stream?: string
  }[]
}

/** Response of POST /v1/messages/batch. */
export type PostMessagesBatchResponse = {
  data: {
    /** msg_… id of the queued message */
    id: string
    status: "queued" | "scheduled"
    created_at: string
    /** Recipients skipped because they are on the suppression list */
    suppressed?: string[]
  } | {
    id: null
    status: "suppressed"
    suppressed: string[]
  }[]
}

/** Response of POST /v1/messages/{id}/cancel. */
export type PostMessagesByIdCancelResponse = {
  id: string
  status: "canceled"
}

/** Request body of POST /v1/messages/analyze. */
export type PostMessagesAnalyzeBody = {
  /** Subject line; an empty one is reported by `subject_missing`. */
  subject: string
  /** HTML body */
  html: string
  /** Plain-text body */
  text?: string
  /** `addr@domain` or `Name <addr@domain>` */
  from?: string
}

/** Response of POST /v1/messages/analyze. */
export type PostMessagesAnalyzeResponse = {
  /** 0–10, lower is better */
  score: number
  /** pass < 3 ≤ warn < 6 ≤ fail */
  verdict: "pass" | "warn" | "fail"
  checks: {
    id: string
    severity: "info" | "warning" | "error"
    message: string
  }[]
  /** `skipped` when the HTML is past a parsing limit (nesting, element count, time; docs/analyze.md): the rules that read it did not run and `html_not_analyzed` says why */
  content_analysis: "complete" | "skipped"
}

/** Query parameters of GET /v1/audit-log. */
export type GetAuditLogQuery = {
  /** Items at most; a page also stops before its JSON would pass OB_API_LIST_MAX_BYTES (1 MB by default), with has_more and next_cursor to continue */
  limit?: number
  cursor?: string
  /** Only this action, e.g. `api_key.rotated` */
  action?: string
  /** Only changes by this key id (`key_…`, `opk_…`), or through the command line (`cli:<user>`) */
  actor?: string
  /** Only changes of this id, name or address */
  target?: string
  /** Only entries at or after this time (ISO 8601) */
  since?: string
  /** Only entries at or before this time (ISO 8601) */
  until?: string
}

/** Response of GET /v1/audit-log. */
export type GetAuditLogResponse = {
  data: {
    /** `aud_…` */
    id: string
    /** The organisation the change concerns; null for an operator change of the whole installation */
    org_id: string | null
    actor: {
      /** An API key of the organisation, or an operator key */
      type: "api_key" | "operator"
      /** The key id (`key_…` or `opk_…`); never the key itself. Through the command line `cli:<local user name>` */
      id: string
      /** Set when the operator made the change through the command line (`outbox …`) */
      via?: "cli"
    }
    /** The client address of the request; the host name for a change made through the command line */
    address: string
    at: string
    /** What was done, `<thing>.<change>`: docs/audit-log.md lists them */
    action: string
    /** The id, name or address of what was changed; null when it is the organisation itself */
    target: string | null
    /** Field names and their new values; never a key, a secret, a private key or a full URL (a URL's host only) */
    changes: {
      [key: string]: unknown
    }
    /** Items the change touched; a bulk change is one entry */
    count: number
    request_id: string
    /** When an erase (POST /v1/privacy/erase) replaced an address the entry named with its keyed hash (`erased:<hex>`); the entry is then listed where that happened, with its own `id` and `at` */
    rewritten_at?: string
  }[]
  has_more: boolean
  next_cursor: string | null
}

/** Request body of POST /v1/privacy/erase. */
export type PostPrivacyEraseBody = {
  /** The address to erase (any case) */
  email: string
  /** Keep refusing sends to the address: the suppression list keeps its keyed hash instead of the address. Default false */
  keep_suppressed?: boolean
}

/** Response of POST /v1/privacy/erase. */
export type PostPrivacyEraseResponse = {
  /** The erase's id (`era_…`) */
  id: string
  /** ISO 8601 */
  erased_at: string
  /** The address's keyed hash (`erased:<hex>`), as the audit log and a kept suppression name it */
  address_hash: string
  removed: {
    /** Message records (a message to several recipients is erased whole) */
    messages: number
    /** Entries of the recipient index (`?to=`) */
    recipient_entries: number
    /** Events in the read model (GET /v1/events, a message's events) */
    events: number
    /** Events deleted from the event stream OB_EVENTS (delivery, tracking, inbound) */
    stored_events: number
    /** Messages whose recorded content was deleted */
    message_content: number
    /** Webhook delivery log entries of the erased events */
    delivery_log_entries: number
    /** Webhook attempts still waiting (OB_WEBHOOK_JOBS) for the erased events or for events naming the address */
    webhook_jobs: number
    /** The engine's per-message delivery state of the erased messages (which recipient got which reply) */
    delivery_states: number
    /** Suppression entries holding the address */
    suppressions: number
    /** Delete markers removed from the suppression bucket under the address's keys (a SHA-256 of the address): those of the erased entries, or of a suppression lifted before */
    suppression_markers: number
    /** Audit log entries naming the address (e.g. suppression.added, suppression.removed), rewritten to name its keyed hash instead */
    audit_entries: number
    /** Received messages kept whole (the `raw.url` of an erased inbound.received event) that the organisation can no longer read: it was taken off their readers */
    inbound_raw: number
    /** Of those, the messages deleted from the store, no other organisation reading them */
    inbound_raw_deleted: number
  }
  /** A keyed hash of the address stays on the suppression list */
  kept_suppressed: boolean
}

/** Response of GET /v1/retention. */
export type GetRetentionResponse = {
  messages_days: number
  events_days: number
  content_days: number
  maximum: {
    messages_days: number
    events_days: number
    content_days: number
  }
}

/** Request body of PATCH /v1/retention. */
export type PatchRetentionBody = {
  /** Days messages are kept; null: the installation's maximum */
  messages_days?: number | null
  /** Days events are kept; null: the installation's maximum */
  events_days?: number | null
  /** Days message content is kept (0: none shown); null: the installation's maximum */
  content_days?: number | null
}

/** Response of PATCH /v1/retention. */
export type PatchRetentionResponse = {
  messages_days: number
  events_days: number
  content_days: number
  maximum: {
    messages_days: number
    events_days: number
    content_days: number
  }
}

/** Every HTTP operation of docs/openapi.json, grouped by resource. */
export function operations (call: Call) {
  return {
  healthz: {
    /** GET /healthz: Liveness: the process is up. */
    get: async (options?: RequestOptions): Promise<GetHealthzResponse> => await call<GetHealthzResponse>({ method: 'GET', path: '/healthz' }, options)
  },
  readyz: {
    /** GET /readyz: Readiness: NATS answers, Redis takes writes, and the queue has room. */
    get: async (options?: RequestOptions): Promise<GetReadyzResponse> => await call<GetReadyzResponse>({ method: 'GET', path: '/readyz' }, options)
  },
  metrics: {
    /** GET /metrics: Prometheus metrics. */
    get: async (options?: RequestOptions): Promise<string> => await call<string>({ method: 'GET', path: '/metrics', text: true }, options)
  },
  apiKeys: {
    /** POST /v1/api-keys: Create an API key; the value is returned only in this response. */
    create: async (body: PostApiKeysBody, options?: RequestOptions): Promise<PostApiKeysResponse> => await call<PostApiKeysResponse>({ method: 'POST', path: '/v1/api-keys', body }, options),
    /** GET /v1/api-keys: List the organisation's API keys (never their values), oldest first. */
    list: async (query?: GetApiKeysQuery, options?: RequestOptions): Promise<GetApiKeysResponse> => await call<GetApiKeysResponse>({ method: 'GET', path: '/v1/api-keys', query }, options),
    /** GET /v1/api-keys/{id}: Read one API key (never its value). */
    get: async (id: string, options?: RequestOptions): Promise<GetApiKeysByIdResponse> => await call<GetApiKeysByIdResponse>({ method: 'GET', path: `/v1/api-keys/${encodeURIComponent(id)}` }, options),
    /** DELETE /v1/api-keys/{id}: Revoke an API key; it is refused (401) from then on. */
    delete: async (id: string, options?: RequestOptions): Promise<void> => await call<void>({ method: 'DELETE', path: `/v1/api-keys/${encodeURIComponent(id)}` }, options),
    /** POST /v1/api-keys/{id}/rotate: Rotate an API key: issue a new value; the old one works for the grace period. */
    rotate: async (id: string, body: PostApiKeysByIdRotateBody, options?: RequestOptions): Promise<PostApiKeysByIdRotateResponse> => await call<PostApiKeysByIdRotateResponse>({ method: 'POST', path: `/v1/api-keys/${encodeURIComponent(id)}/rotate`, body }, options)
  },
  domains: {
    /** POST /v1/domains: Claim a sending domain; publish the returned DNS records, then verify it (the first claim to verify owns the name). */
    create: async (body: PostDomainsBody, options?: RequestOptions): Promise<PostDomainsResponse> => await call<PostDomainsResponse>({ method: 'POST', path: '/v1/domains', body }, options),
    /** GET /v1/domains: List the organisation's domains, oldest first. */
    list: async (query?: GetDomainsQuery, options?: RequestOptions): Promise<GetDomainsResponse> => await call<GetDomainsResponse>({ method: 'GET', path: '/v1/domains', query }, options),
    /** GET /v1/domains/{id}: Read one domain. */
    get: async (id: string, options?: RequestOptions): Promise<GetDomainsByIdResponse> => await call<GetDomainsByIdResponse>({ method: 'GET', path: `/v1/domains/${encodeURIComponent(id)}` }, options),
    /** PATCH /v1/domains/{id}: Choose the domain's own return-path and tracking hosts (subdomains of it); each is used once a verification finds its records. */
    update: async (id: string, body: PatchDomainsByIdBody, options?: RequestOptions): Promise<PatchDomainsByIdResponse> => await call<PatchDomainsByIdResponse>({ method: 'PATCH', path: `/v1/domains/${encodeURIComponent(id)}`, body }, options),
    /** DELETE /v1/domains/{id}: Delete a domain and free its name. */
    delete: async (id: string, options?: RequestOptions): Promise<void> => await call<void>({ method: 'DELETE', path: `/v1/domains/${encodeURIComponent(id)}` }, options),
    /** POST /v1/domains/{id}/verify: Check the domain's DNS records (or, with OB_DOMAIN_VERIFICATION=off, mark it verified). */
    verify: async (id: string, options?: RequestOptions): Promise<PostDomainsByIdVerifyResponse> => await call<PostDomainsByIdVerifyResponse>({ method: 'POST', path: `/v1/domains/${encodeURIComponent(id)}/verify` }, options),
    /** POST /v1/domains/{id}/dkim/rotate: Add a new DKIM key pair (RSA-2048 and ed25519, each under a new selector); it signs from the verification that finds both its TXT records, and the replaced keys' records stay listed for 7 days. */
    dkimRotate: async (id: string, options?: RequestOptions): Promise<PostDomainsByIdDkimRotateResponse> => await call<PostDomainsByIdDkimRotateResponse>({ method: 'POST', path: `/v1/domains/${encodeURIComponent(id)}/dkim/rotate` }, options),
    /** GET /v1/domains/{id}/health: Look up the domain's DNS now: SPF for every egress source, DKIM, DMARC, return path, CNAMEs, MTA-STS and TLS-RPT, and the sources' reverse DNS and blocklist listings. */
    health: async (id: string, options?: RequestOptions): Promise<GetDomainsByIdHealthResponse> => await call<GetDomainsByIdHealthResponse>({ method: 'GET', path: `/v1/domains/${encodeURIComponent(id)}/health` }, options),
    /** GET /v1/domains/{id}/dmarc: The DMARC aggregate reports received about the domain, summarised per UTC day. */
    dmarc: async (id: string, query?: GetDomainsByIdDmarcQuery, options?: RequestOptions): Promise<GetDomainsByIdDmarcResponse> => await call<GetDomainsByIdDmarcResponse>({ method: 'GET', path: `/v1/domains/${encodeURIComponent(id)}/dmarc`, query }, options)
  },
  webhooks: {
    /** POST /v1/webhooks: Register a webhook; its signing secret is returned only in this response. */
    create: async (body: PostWebhooksBody, options?: RequestOptions): Promise<PostWebhooksResponse> => await call<PostWebhooksResponse>({ method: 'POST', path: '/v1/webhooks', body }, options),
    /** GET /v1/webhooks: List the organisation's webhooks (without secrets), oldest first. */
    list: async (query?: GetWebhooksQuery, options?: RequestOptions): Promise<GetWebhooksResponse> => await call<GetWebhooksResponse>({ method: 'GET', path: '/v1/webhooks', query }, options),
    /** GET /v1/webhooks/{id}: Read one webhook (without its secret). */
    get: async (id: string, options?: RequestOptions): Promise<GetWebhooksByIdResponse> => await call<GetWebhooksByIdResponse>({ method: 'GET', path: `/v1/webhooks/${encodeURIComponent(id)}` }, options),
    /** PATCH /v1/webhooks/{id}: Change the URL, events or filters of a webhook, pause it, or make it active again (also after it failed). */
    update: async (id: string, body: PatchWebhooksByIdBody, options?: RequestOptions): Promise<PatchWebhooksByIdResponse> => await call<PatchWebhooksByIdResponse>({ method: 'PATCH', path: `/v1/webhooks/${encodeURIComponent(id)}`, body }, options),
    /** DELETE /v1/webhooks/{id}: Delete a webhook; nothing more is delivered to it. */
    delete: async (id: string, options?: RequestOptions): Promise<void> => await call<void>({ method: 'DELETE', path: `/v1/webhooks/${encodeURIComponent(id)}` }, options),
    /** POST /v1/webhooks/{id}/test: Send a signed test event to this webhook. */
    test: async (id: string, body: PostWebhooksByIdTestBody, options?: RequestOptions): Promise<PostWebhooksByIdTestResponse> => await call<PostWebhooksByIdTestResponse>({ method: 'POST', path: `/v1/webhooks/${encodeURIComponent(id)}/test`, body }, options),
    /** GET /v1/webhooks/{id}/deliveries: Delivery attempts of this webhook, newest first. */
    deliveries: async (id: string, query?: GetWebhooksByIdDeliveriesQuery, options?: RequestOptions): Promise<GetWebhooksByIdDeliveriesResponse> => await call<GetWebhooksByIdDeliveriesResponse>({ method: 'GET', path: `/v1/webhooks/${encodeURIComponent(id)}/deliveries`, query }, options),
    /** POST /v1/webhooks/{id}/rotate-secret: Replace the signing secret; the previous one keeps signing during a grace period. */
    rotateSecret: async (id: string, body: PostWebhooksByIdRotateSecretBody, options?: RequestOptions): Promise<PostWebhooksByIdRotateSecretResponse> => await call<PostWebhooksByIdRotateSecretResponse>({ method: 'POST', path: `/v1/webhooks/${encodeURIComponent(id)}/rotate-secret`, body, idempotent: true }, options),
    /** POST /v1/webhooks/{id}/replay: Send one event to this webhook again. */
    replay: async (id: string, body: PostWebhooksByIdReplayBody, options?: RequestOptions): Promise<PostWebhooksByIdReplayResponse> => await call<PostWebhooksByIdReplayResponse>({ method: 'POST', path: `/v1/webhooks/${encodeURIComponent(id)}/replay`, body, idempotent: true }, options),
    /** POST /v1/webhooks/{id}/recover: Send again every event since a time that this webhook did not receive. */
    recover: async (id: string, body: PostWebhooksByIdRecoverBody, options?: RequestOptions): Promise<PostWebhooksByIdRecoverResponse> => await call<PostWebhooksByIdRecoverResponse>({ method: 'POST', path: `/v1/webhooks/${encodeURIComponent(id)}/recover`, body, idempotent: true }, options)
  },
  templates: {
    /** POST /v1/templates: Create a template with {{var}} placeholders. */
    create: async (body: PostTemplatesBody, options?: RequestOptions): Promise<PostTemplatesResponse> => await call<PostTemplatesResponse>({ method: 'POST', path: '/v1/templates', body }, options),
    /** GET /v1/templates: List the organisation's templates, oldest first. */
    list: async (query?: GetTemplatesQuery, options?: RequestOptions): Promise<GetTemplatesResponse> => await call<GetTemplatesResponse>({ method: 'GET', path: '/v1/templates', query }, options),
    /** GET /v1/templates/{id}: Read one template. */
    get: async (id: string, options?: RequestOptions): Promise<GetTemplatesByIdResponse> => await call<GetTemplatesByIdResponse>({ method: 'GET', path: `/v1/templates/${encodeURIComponent(id)}` }, options),
    /** PATCH /v1/templates/{id}: Change some fields of a template. */
    update: async (id: string, body: PatchTemplatesByIdBody, options?: RequestOptions): Promise<PatchTemplatesByIdResponse> => await call<PatchTemplatesByIdResponse>({ method: 'PATCH', path: `/v1/templates/${encodeURIComponent(id)}`, body }, options),
    /** DELETE /v1/templates/{id}: Delete a template. */
    delete: async (id: string, options?: RequestOptions): Promise<void> => await call<void>({ method: 'DELETE', path: `/v1/templates/${encodeURIComponent(id)}` }, options)
  },
  streams: {
    /** GET /v1/streams: List the organisation's message streams: transactional first, then the broadcast streams by id. */
    list: async (options?: RequestOptions): Promise<GetStreamsResponse> => await call<GetStreamsResponse>({ method: 'GET', path: '/v1/streams' }, options),
    /** POST /v1/streams: Create a broadcast stream. */
    create: async (body: PostStreamsBody, options?: RequestOptions): Promise<PostStreamsResponse> => await call<PostStreamsResponse>({ method: 'POST', path: '/v1/streams', body }, options),
    /** GET /v1/streams/{stream}: Read one message stream. */
    get: async (stream: string, options?: RequestOptions): Promise<GetStreamsByStreamResponse> => await call<GetStreamsByStreamResponse>({ method: 'GET', path: `/v1/streams/${encodeURIComponent(stream)}` }, options),
    /** PATCH /v1/streams/{stream}: Change the name or description of a broadcast stream. */
    update: async (stream: string, body: PatchStreamsByStreamBody, options?: RequestOptions): Promise<PatchStreamsByStreamResponse> => await call<PatchStreamsByStreamResponse>({ method: 'PATCH', path: `/v1/streams/${encodeURIComponent(stream)}`, body }, options),
    /** DELETE /v1/streams/{stream}: Delete a broadcast stream. */
    delete: async (stream: string, options?: RequestOptions): Promise<void> => await call<void>({ method: 'DELETE', path: `/v1/streams/${encodeURIComponent(stream)}` }, options)
  },
  billing: {
    /** GET /v1/billing: The organisation's plan and per-key rate limit. */
    get: async (options?: RequestOptions): Promise<GetBillingResponse> => await call<GetBillingResponse>({ method: 'GET', path: '/v1/billing' }, options),
    /** PATCH /v1/billing: Lower the plan; raising it is the operator's (PUT /v1/operator/organizations/{id}/plan). */
    update: async (body: PatchBillingBody, options?: RequestOptions): Promise<PatchBillingResponse> => await call<PatchBillingResponse>({ method: 'PATCH', path: '/v1/billing', body }, options)
  },
  suppressions: {
    /** GET /v1/suppressions: List suppressed addresses (hard bounces, complaints, unsubscribes, manual), in address order. */
    list: async (query?: GetSuppressionsQuery, options?: RequestOptions): Promise<GetSuppressionsResponse> => await call<GetSuppressionsResponse>({ method: 'GET', path: '/v1/suppressions', query }, options),
    /** POST /v1/suppressions: Suppress an address by hand (reason manual); sends to it are then skipped. */
    create: async (body: PostSuppressionsBody, options?: RequestOptions): Promise<PostSuppressionsResponse> => await call<PostSuppressionsResponse>({ method: 'POST', path: '/v1/suppressions', body }, options),
    /** GET /v1/suppressions/export: Download the suppression list as CSV (email,reason,created_at,expires_at,message_id,stream), in address order. */
    export: async (query?: GetSuppressionsExportQuery, options?: RequestOptions): Promise<string> => await call<string>({ method: 'GET', path: '/v1/suppressions/export', query, text: true }, options),
    /** POST /v1/suppressions/import: Suppress up to 100000 addresses at once, from JSON or CSV, with a report line by line. */
    import: async (body: PostSuppressionsImportBody, options?: RequestOptions): Promise<PostSuppressionsImportResponse> => await call<PostSuppressionsImportResponse>({ method: 'POST', path: '/v1/suppressions/import', body }, options),
    /** DELETE /v1/suppressions/{email}: Remove an address from the suppression list so it can be sent to again. */
    delete: async (email: string, query?: DeleteSuppressionsByEmailQuery, options?: RequestOptions): Promise<void> => await call<void>({ method: 'DELETE', path: `/v1/suppressions/${encodeURIComponent(email)}`, query }, options)
  },
  inboundRoutes: {
    /** POST /v1/inbound/routes: Route inbound mail for an address (or a whole domain) to the organisation's webhooks as inbound.received events. */
    create: async (body: PostInboundRoutesBody, options?: RequestOptions): Promise<PostInboundRoutesResponse> => await call<PostInboundRoutesResponse>({ method: 'POST', path: '/v1/inbound/routes', body }, options),
    /** GET /v1/inbound/routes: List the organisation's inbound routes, oldest first. */
    list: async (query?: GetInboundRoutesQuery, options?: RequestOptions): Promise<GetInboundRoutesResponse> => await call<GetInboundRoutesResponse>({ method: 'GET', path: '/v1/inbound/routes', query }, options),
    /** GET /v1/inbound/routes/{id}: Read one inbound route. */
    get: async (id: string, options?: RequestOptions): Promise<GetInboundRoutesByIdResponse> => await call<GetInboundRoutesByIdResponse>({ method: 'GET', path: `/v1/inbound/routes/${encodeURIComponent(id)}` }, options),
    /** DELETE /v1/inbound/routes/{id}: Delete an inbound route; mail to its address is then refused. */
    delete: async (id: string, options?: RequestOptions): Promise<void> => await call<void>({ method: 'DELETE', path: `/v1/inbound/routes/${encodeURIComponent(id)}` }, options)
  },
  inbound: {
    /** GET /v1/inbound/messages/{id}/raw: The whole received message (message/rfc822) of an inbound.received event that left part of it out. */
    messagesRaw: async (id: string, options?: RequestOptions): Promise<string> => await call<string>({ method: 'GET', path: `/v1/inbound/messages/${encodeURIComponent(id)}/raw`, text: true }, options)
  },
  whoami: {
    /** GET /v1/whoami: Describe the calling API key. */
    get: async (options?: RequestOptions): Promise<GetWhoamiResponse> => await call<GetWhoamiResponse>({ method: 'GET', path: '/v1/whoami' }, options)
  },
  messages: {
    /** GET /v1/messages: List messages, newest first. */
    list: async (query?: GetMessagesQuery, options?: RequestOptions): Promise<GetMessagesResponse> => await call<GetMessagesResponse>({ method: 'GET', path: '/v1/messages', query }, options),
    /** GET /v1/messages/{id}: One message with its status, its recipients and events. */
    get: async (id: string, options?: RequestOptions): Promise<GetMessagesByIdResponse> => await call<GetMessagesByIdResponse>({ method: 'GET', path: `/v1/messages/${encodeURIComponent(id)}` }, options),
    /** PATCH /v1/messages/{id}: Reschedule a scheduled message. */
    update: async (id: string, body: PatchMessagesByIdBody, options?: RequestOptions): Promise<PatchMessagesByIdResponse> => await call<PatchMessagesByIdResponse>({ method: 'PATCH', path: `/v1/messages/${encodeURIComponent(id)}`, body }, options),
    /** GET /v1/messages/{id}/content: The message as it was rendered for sending: subject, HTML, text, headers, attachment names. */
    content: async (id: string, options?: RequestOptions): Promise<GetMessagesByIdContentResponse> => await call<GetMessagesByIdContentResponse>({ method: 'GET', path: `/v1/messages/${encodeURIComponent(id)}/content` }, options),
    /** POST /v1/messages/send: Send one message. */
    send: async (body: PostMessagesSendBody, options?: RequestOptions): Promise<PostMessagesSendResponse> => await call<PostMessagesSendResponse>({ method: 'POST', path: '/v1/messages/send', body, idempotent: true }, options),
    /** POST /v1/messages/batch: Send up to 100 messages. */
    batch: async (body: PostMessagesBatchBody, options?: RequestOptions): Promise<PostMessagesBatchResponse> => await call<PostMessagesBatchResponse>({ method: 'POST', path: '/v1/messages/batch', body, idempotent: true }, options),
    /** POST /v1/messages/{id}/cancel: Cancel a scheduled message. */
    cancel: async (id: string, options?: RequestOptions): Promise<PostMessagesByIdCancelResponse> => await call<PostMessagesByIdCancelResponse>({ method: 'POST', path: `/v1/messages/${encodeURIComponent(id)}/cancel` }, options),
    /** POST /v1/messages/analyze: Score content for spam signals before sending. */
    analyze: async (body: PostMessagesAnalyzeBody, options?: RequestOptions): Promise<PostMessagesAnalyzeResponse> => await call<PostMessagesAnalyzeResponse>({ method: 'POST', path: '/v1/messages/analyze', body }, options)
  },
  events: {
    /** GET /v1/events: List events, newest first. */
    list: async (query?: GetEventsQuery, options?: RequestOptions): Promise<GetEventsResponse> => await call<GetEventsResponse>({ method: 'GET', path: '/v1/events', query }, options)
  },
  stats: {
    /** GET /v1/stats: Counts of messages sent and of each event type over a time range. */
    get: async (query?: GetStatsQuery, options?: RequestOptions): Promise<GetStatsResponse> => await call<GetStatsResponse>({ method: 'GET', path: '/v1/stats', query }, options)
  },
  reputation: {
    /** GET /v1/reputation: Hard-bounce and complaint rates per stream over the rolling window, the thresholds, and which streams are paused. */
    get: async (options?: RequestOptions): Promise<GetReputationResponse> => await call<GetReputationResponse>({ method: 'GET', path: '/v1/reputation' }, options),
    /** POST /v1/reputation/streams/{stream}/resume: Resume sending on a stream the reputation guard paused. */
    streamsResume: async (stream: string, options?: RequestOptions): Promise<PostReputationStreamsByStreamResumeResponse> => await call<PostReputationStreamsByStreamResumeResponse>({ method: 'POST', path: `/v1/reputation/streams/${encodeURIComponent(stream)}/resume` }, options)
  },
  auditLog: {
    /** GET /v1/audit-log: Who changed what in this organisation, newest first. */
    list: async (query?: GetAuditLogQuery, options?: RequestOptions): Promise<GetAuditLogResponse> => await call<GetAuditLogResponse>({ method: 'GET', path: '/v1/audit-log', query }, options)
  },
  privacy: {
    /** POST /v1/privacy/erase: Erase an address from every store Outbox keeps for the organisation, and answer what was removed. */
    erase: async (body: PostPrivacyEraseBody, options?: RequestOptions): Promise<PostPrivacyEraseResponse> => await call<PostPrivacyEraseResponse>({ method: 'POST', path: '/v1/privacy/erase', body }, options)
  },
  retention: {
    /** GET /v1/retention: How many days the organisation's messages, events and message content are kept. */
    get: async (options?: RequestOptions): Promise<GetRetentionResponse> => await call<GetRetentionResponse>({ method: 'GET', path: '/v1/retention' }, options),
    /** PATCH /v1/retention: Set how many days the organisation's messages, events and message content are kept. */
    update: async (body: PatchRetentionBody, options?: RequestOptions): Promise<PatchRetentionResponse> => await call<PatchRetentionResponse>({ method: 'PATCH', path: '/v1/retention', body }, options)
  }
  }
}

export type Operations = ReturnType<typeof operations>
