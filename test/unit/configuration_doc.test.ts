import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { EnvSchema } from '../../config/mod.ts'

const doc = readFileSync(new URL('../../../docs/configuration.md', import.meta.url), 'utf8')

test('docs/configuration.md has a row for every variable of the schema, with its default', () => {
  const props = EnvSchema.properties as Record<string, { default?: unknown }>
  for (const [name, schema] of Object.entries(props)) {
    const row = doc.split('\n').find((l) => l.startsWith(`| \`${name}\` |`))
    assert.ok(row !== undefined, `docs/configuration.md lacks ${name}`)
    if (schema.default !== undefined) {
      assert.ok(row.includes(`\`${String(schema.default)}\``), `${name}: default ${String(schema.default)} not stated`)
    }
  }
})
