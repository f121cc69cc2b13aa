import type { TSchema } from 'typebox'
import { Compile } from 'typebox/compile'
import { Settings } from 'typebox/system'
import { ApiError, type FieldError } from '../../protocol/mod.ts'

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

/** The sub-schema a `#/properties/to/anyOf/1/items` path points at, for its `errorMessage`. */
function schemaAt (root: TSchema, schemaPath: string): Record<string, unknown> | undefined {
  let node: unknown = root
  for (const part of schemaPath.split('/').slice(1)) {
    if (node === null || typeof node !== 'object') return undefined
    node = (node as Record<string, unknown>)[part.replace(/~1/g, '/').replace(/~0/g, '~')]
  }
  return node !== null && typeof node === 'object' ? node as Record<string, unknown> : undefined
}

/** The values an enum (`enum`, or a union of constants) allows, when the failing keyword is one. */
function allowedOf (node: Record<string, unknown> | undefined, keyword: string): unknown[] | undefined {
  if (keyword === 'enum' && Array.isArray(node?.enum)) return node.enum as unknown[]
  if (keyword === 'const' && node !== undefined && 'const' in node) return [node.const]
  if (keyword === 'anyOf' && Array.isArray(node?.anyOf)) {
    const branches = node.anyOf as Array<Record<string, unknown>>
    if (branches.every((b) => b.const !== undefined)) return branches.map((b) => b.const)
  }
  return undefined
}

/** A field's error; an enum's names the values it allows, in the text and in `allowed`. */
function errorOf (root: TSchema, e: { keyword: string, schemaPath: string, message: string }): Omit<FieldError, 'field'> {
  const allowed = allowedOf(schemaAt(root, e.schemaPath), e.keyword)
  if (allowed === undefined) return { message: messageOf(root, e) }
  return { message: `must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}`, allowed }
}

function messageOf (root: TSchema, e: { keyword: string, schemaPath: string, message: string }): string {
  const node = schemaAt(root, e.schemaPath)
  // Only for the keywords whose generic text is unreadable; a length or type error keeps its own message.
  const unreadable = e.keyword === 'pattern' || e.keyword === 'format' || e.keyword === 'anyOf'
  if (typeof node?.errorMessage === 'string' && unreadable) return node.errorMessage
  // The compiled pattern carries the length guard of `lengthBeforePattern`; users see the one the schema publishes.
  if (e.keyword === 'pattern' && typeof node?.pattern === 'string') return `must match pattern "${node.pattern}"`
  return e.message
}

/**
 * A copy of `schema` in which every `pattern` of a string with a `maxLength` first checks the length. TypeBox's error
 * pass runs every keyword of a value, `pattern` included, even after `maxLength` failed, so an 80 KB value for a
 * 254-character field went through the regular expression whole. Behind the lookahead (code points, as `maxLength`
 * counts them: TypeBox compiles patterns with the `u` flag) a pattern reads at most `maxLength + 1` characters.
 */
function lengthBeforePattern<T> (schema: T): T {
  if (Array.isArray(schema)) return schema.map(lengthBeforePattern) as T
  if (schema === null || typeof schema !== 'object') return schema
  // Descriptors, not a spread: TypeBox keeps its own markers (`~kind`) as non-enumerable properties.
  const descriptors = Object.getOwnPropertyDescriptors(schema)
  for (const key of Reflect.ownKeys(descriptors)) {
    const d = descriptors[key as keyof typeof descriptors] as PropertyDescriptor
    if ('value' in d) d.value = lengthBeforePattern(d.value)
  }
  const pattern = descriptors.pattern?.value
  const maxLength = descriptors.maxLength?.value
  if (typeof pattern === 'string' && typeof maxLength === 'number') {
    descriptors.pattern!.value = `^(?=[\\s\\S]{0,${maxLength}}$)(?:${pattern})`
  }
  return Object.create(Object.getPrototypeOf(schema), descriptors) as T
}

/**
 * Compiles once; `check` lists every failing field, one entry per field. A schema may carry `errorMessage`,
 * which replaces the generic text (a pattern's regular expression means nothing to a user).
 */
export function compileValidator (schema: TSchema): Validator {
  const compiled = Compile(lengthBeforePattern(schema))
  return {
    check (value) {
      if (compiled.Check(value)) return null
      const seen = new Map<string, Omit<FieldError, 'field'>>()
      const errors = [...compiled.Errors(value)]
      for (const e of errors) {
        const params = e.params as { requiredProperties?: string[], additionalProperties?: string[] }
        const names = params.requiredProperties ?? params.additionalProperties
        if (names !== undefined) {
          const record = params.additionalProperties !== undefined && schemaAt(schema, e.schemaPath)?.patternProperties !== undefined
          const why = params.requiredProperties !== undefined ? 'is required' : record ? 'is not an allowed name' : 'is not a known field'
          for (const n of names) {
            const f = fieldOf(e.instancePath, n)
            if (!seen.has(f)) seen.set(f, { message: why })
          }
          continue
        }
        // `additionalProperties: false` also reports each extra key as "schema is false"; the entry above names it better.
        if (e.keyword === 'boolean' && e.schemaPath.endsWith('/additionalProperties')) continue
        const deeper = errors.some((o) => o.instancePath.startsWith(e.instancePath + '/'))
        // A union (`to`: string or array) reports every branch it tried; when the value failed deeper inside one
        // branch (`to[1]`), that error is the one that helps, otherwise the union's own message does.
        if (e.instancePath !== '' || e.keyword === 'anyOf') {
          if (e.keyword !== 'anyOf' && /\/anyOf\/\d+$/.test(e.schemaPath) && errors.some((o) => o.keyword === 'anyOf' && o.instancePath === e.instancePath)) continue
          if (e.keyword === 'anyOf' && deeper) continue
        }
        const f = fieldOf(e.instancePath)
        if (!seen.has(f)) seen.set(f, errorOf(schema, e))
      }
      return [...seen].map(([field, error]) => ({ field, ...error }))
    }
  }
}

export function assertValid<T> (validator: Validator, value: unknown): T {
  const errors = validator.check(value)
  if (errors !== null) throw ApiError.validation(errors)
  return value as T
}
