import type { TSchema } from 'typebox'
import { Compile } from 'typebox/compile'
import { Settings } from 'typebox/system'
import { ApiError, type FieldError } from '../../engine/protocol/mod.ts'

// TypeBox stops after 8 errors by default, and a union of N literals spends N of them on one value;
// users are promised every bad field, and bodies are capped at 10 MB, so allow many.
Settings.Set({ maxErrors: 1000 })

export interface Validator { check: (value: unknown) => FieldError[] | null }

/** Turns a JSON pointer (`/to/3`) into the field name users see (`to[3]`). */
export function fieldOf (instancePath: string, missing?: string): string {
  const parts = instancePath.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
  if (missing !== undefined) parts.push(missing)
  let out = ''
  for (const p of parts) out += /^\d+$/.test(p) ? `[${p}]` : out === '' ? p : `.${p}`
  return out === '' ? 'body' : out
}

/** Compiles once; `check` lists every failing field, one entry per field. */
export function compileValidator (schema: TSchema): Validator {
  const compiled = Compile(schema)
  return {
    check (value) {
      if (compiled.Check(value)) return null
      const seen = new Map<string, string>()
      for (const e of compiled.Errors(value)) {
        const params = e.params as { requiredProperties?: string[], additionalProperties?: string[] }
        const names = params.requiredProperties ?? params.additionalProperties
        if (names !== undefined) {
          for (const n of names) {
            const f = fieldOf(e.instancePath, n)
            if (!seen.has(f)) seen.set(f, params.requiredProperties !== undefined ? 'is required' : 'is not a known field')
          }
          continue
        }
        const f = fieldOf(e.instancePath)
        if (e.keyword === 'boolean' && e.schemaPath.endsWith('/additionalProperties')) {
          if (!seen.has(f)) seen.set(f, 'is not a known field')
          continue
        }
        // A union reports every branch; the last message ("must match a schema in anyOf") is the least useful.
        if (!seen.has(f)) seen.set(f, e.message)
      }
      return [...seen].map(([field, message]) => ({ field, message }))
    }
  }
}

export function assertValid<T> (validator: Validator, value: unknown): T {
  const errors = validator.check(value)
  if (errors !== null) throw ApiError.validation(errors)
  return value as T
}
