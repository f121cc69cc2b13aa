import neostandard from 'neostandard'

/**
 * neostandard with TypeScript. The rules turned off fight patterns this codebase uses on purpose; each says why.
 */
export default [
  {
    ignores: [
      '**/dist/**', 'coverage/**', 'node_modules/**', 'var/**', 'bench/results/**',
      // generated from docs/openapi.json by scripts/gen_client.ts; reflowed by regenerating, never by hand
      'client/src/generated.ts'
    ]
  },
  // the CommonJS files piscina loads in worker threads are TypeScript too (stores/threads/thread_entry.cts)
  ...neostandard({ ts: true, filesTs: ['**/*.cts'] }),
  {
    rules: {
      // several short properties share a line once an object literal breaks; the layout is left to the author
      '@stylistic/object-property-newline': 'off',
      '@stylistic/object-curly-newline': 'off',
      '@stylistic/multiline-ternary': 'off',
      // `void promise` marks a promise deliberately left running (its errors are handled inside)
      'no-void': 'off',
      // loops over flags that another task clears (`while (running)`) are reported as never modified
      'no-unmodified-loop-condition': 'off',
      // promise executors name their callbacks for what they mean (`done`, `fail`)
      'promise/param-names': 'off',
      // a variable assigned once, after a closure that reads it was created (servers handing themselves to handlers)
      'prefer-const': ['error', { destructuring: 'all', ignoreReadBeforeAssign: true }],
      // a line a reader holds at once, and side-by-side diffs that stay readable; a long string is split with `+` or
      // named as a constant, a long comment re-wrapped. A URL or a regular expression literal is one token and may run on.
      '@stylistic/max-len': ['error', {
        code: 140,
        tabWidth: 2,
        ignoreUrls: true,
        ignoreRegExpLiterals: true,
        ignoreStrings: false,
        ignoreTemplateLiterals: false,
        ignoreComments: false
      }]
    }
  },
  {
    files: ['**/*.ts', '**/*.tsx', '**/*.cts'],
    rules: {
      // a TypeBox schema and its static type share one name (`const X = Type.Object(…)`, `type X = Static<typeof X>`)
      '@typescript-eslint/no-redeclare': 'off',
      // `_name` is a binding kept on purpose (`for await (const _ of events)`)
      '@typescript-eslint/no-unused-vars': ['error', {
        args: 'none', caughtErrors: 'none', ignoreRestSiblings: true, vars: 'all', varsIgnorePattern: '^_'
      }]
    }
  }
]
