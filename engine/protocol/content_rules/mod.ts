import { scanHtml } from './html_scan.ts'
import { RULES, hostOf, type RuleContext, type Severity } from './rules.ts'

export { RULES, SPAM_PHRASES, URL_SHORTENERS, RISKY_EXTENSIONS, type Rule, type Severity } from './rules.ts'

/** Verdict thresholds on the 0–10 score (lower is better). */
export const PASS_BELOW = 3
export const WARN_BELOW = 6
export const MAX_SCORE = 10

export interface ContentInput {
  subject: string
  html: string
  text?: string
  from?: string
  attachments?: Array<{ filename: string }>
}

export interface ContentCheck { id: string, severity: Severity, message: string }

export interface ContentReport {
  score: number
  verdict: 'pass' | 'warn' | 'fail'
  checks: ContentCheck[]
}

export function verdictOf (score: number): ContentReport['verdict'] {
  return score < PASS_BELOW ? 'pass' : score < WARN_BELOW ? 'warn' : 'fail'
}

/**
 * Scores content with the rule table: each rule that fires adds its weight; the sum is capped at 10 and rounded
 * to one decimal. Pure and synchronous: the analyze endpoint and inbound spam scoring share it.
 */
export function analyzeContent (input: ContentInput): ContentReport {
  const scan = scanHtml(input.html)
  const text = input.text ?? ''
  const linkHosts: string[] = []
  for (const l of scan.links) {
    const h = hostOf(l.href)
    if (h !== undefined) linkHosts.push(h)
  }
  const ctx: RuleContext = {
    subject: input.subject,
    html: input.html,
    text,
    ...(input.from !== undefined ? { from: input.from } : {}),
    attachments: input.attachments ?? [],
    scan,
    body: scan.text !== '' ? scan.text : text,
    linkHosts
  }
  const checks: ContentCheck[] = []
  let total = 0
  for (const rule of RULES) {
    const message = rule.check(ctx)
    if (message === undefined) continue
    checks.push({ id: rule.id, severity: rule.severity, message })
    total += rule.weight
  }
  const score = Math.min(MAX_SCORE, Math.round(total * 10) / 10)
  return { score, verdict: verdictOf(score), checks }
}
