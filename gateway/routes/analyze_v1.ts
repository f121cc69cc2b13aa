import { Type } from 'typebox'
import { route } from '../http/route.ts'

const AnalyzeBody = Type.Object({
  subject: Type.String({ maxLength: 998, description: 'Subject line; an empty one is reported by `subject_missing`.' }),
  html: Type.String({ description: 'HTML body' }),
  text: Type.Optional(Type.String({ description: 'Plain-text body' })),
  from: Type.Optional(Type.String({ maxLength: 320, description: '`addr@domain` or `Name <addr@domain>`' }))
}, { additionalProperties: false })

const Check = Type.Object({
  id: Type.String(),
  severity: Type.Union([Type.Literal('info'), Type.Literal('warning'), Type.Literal('error')]),
  message: Type.String()
})
const AnalyzeResult = Type.Object({
  score: Type.Number({ minimum: 0, maximum: 10, description: '0–10, lower is better' }),
  verdict: Type.Union([Type.Literal('pass'), Type.Literal('warn'), Type.Literal('fail')], { description: 'pass < 3 ≤ warn < 6 ≤ fail' }),
  checks: Type.Array(Check),
  content_analysis: Type.Union([Type.Literal('complete'), Type.Literal('skipped')], {
    description: '`skipped` when the HTML is past a parsing limit (nesting, element count, time; docs/analyze.md): ' +
      'the rules that read it did not run and `html_not_analyzed` says why'
  })
})

interface AnalyzeInput { subject: string, html: string, text?: string, from?: string }

export const analyzeRoutes = [
  route<AnalyzeInput>({
    method: 'post',
    path: '/v1/messages/analyze',
    permission: 'send',
    summary: 'Score content for spam signals before sending',
    description: 'Runs the content rules (docs/analyze.md) over the subject and bodies. Nothing is sent or stored.',
    tag: 'Messages',
    // Stores nothing: Redis being full is no reason to refuse it.
    whenStoreFull: 'local',
    body: AnalyzeBody,
    responses: {
      200: { description: 'Score, verdict and the rules that fired', schema: AnalyzeResult },
      400: { description: 'validation_error' },
      503: { description: 'service_unavailable: too many analyses waiting' }
    },
    handler: async ({ body, deps }) => ({ status: 200, body: await deps.analyzer.analyze(body) })
  })
]
