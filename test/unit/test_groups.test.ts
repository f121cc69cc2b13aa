import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

// scripts/test_groups.sh, copied into a directory of its own with three small test files: one marked long-wait,
// two not (one of them "new", with no marker of any kind). Each test file writes that it started, then waits for
// a file of the other group to have started, so a pass means the two groups ran at the same time.
const root = fileURLToPath(new URL('../../../', import.meta.url))

function fixture (): string {
  const dir = mkdtempSync(join(tmpdir(), 'outbox-groups-'))
  mkdirSync(join(dir, 'scripts'))
  mkdirSync(join(dir, 'test', 'unit'), { recursive: true })
  mkdirSync(join(dir, 'dist', 'test', 'unit'), { recursive: true })
  copyFileSync(join(root, 'scripts', 'test_groups.sh'), join(dir, 'scripts', 'test_groups.sh'))
  mkdirSync(join(dir, 'lib'))
  const file = (name: string, marker: string, waitFor: string): void => {
    writeFileSync(join(dir, 'lib', `${name}.js`), `export const used = () => '${name}'\n`)
    writeFileSync(join(dir, 'test', 'unit', `${name}.test.ts`), `${marker}export {}\n`)
    writeFileSync(join(dir, 'dist', 'test', 'unit', `${name}.test.js`), `${marker}import { test } from 'node:test'
import { existsSync, writeFileSync } from 'node:fs'
import { used } from '../../../lib/${name}.js'
test('${name}', async () => {
  used()
  writeFileSync(${JSON.stringify(join(dir, `${name}.started`))}, '')
  const deadline = Date.now() + 30000
  while (!existsSync(${JSON.stringify(join(dir, `${waitFor}.started`))})) {
    if (Date.now() > deadline) throw new Error('${waitFor} did not run beside ${name}')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  if (process.env.FAIL_GROUP_FILE === '${name}') throw new Error('${name} failed as asked')
})
`)
  }
  file('a_main', '// an ordinary file\n', 'b_long')
  file('b_long', '// test-group: long-wait — waits for the main group\n', 'a_main')
  file('c_new', '', 'b_long')
  return dir
}

async function run (
  dir: string, args: string[], env: Record<string, string> = {}, command: string[] = ['bash']
): Promise<{ code: number | null, out: string }> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env }
  delete childEnv.NODE_TEST_CONTEXT // the script's own node --test runs report to it, not to this runner
  delete childEnv.NODE_V8_COVERAGE
  const child = spawn(command[0]!, [...command.slice(1), join(dir, 'scripts', 'test_groups.sh'), ...args], { env: childEnv, cwd: dir })
  let out = ''
  child.stdout.on('data', (d: Buffer) => { out += d.toString() })
  child.stderr.on('data', (d: Buffer) => { out += d.toString() })
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  return { code, out }
}

test('--list puts the marked file in long-wait and every other file, a new one too, in main', async () => {
  const dir = fixture()
  try {
    const { code, out } = await run(dir, ['--list'])
    assert.equal(code, 0, out)
    assert.deepEqual(out.trim().split('\n').map((l) => l.split(/\s+/)), [
      ['main', 'dist/test/unit/a_main.test.js'],
      ['main', 'dist/test/unit/c_new.test.js'],
      ['long-wait', 'dist/test/unit/b_long.test.js']
    ])
  } finally { rmSync(dir, { recursive: true, force: true }) }
})

test('every OB_TEST_LATE_EVERY-th main file runs late in the background slot, reports there, and its failure fails the run', async () => {
  const dir = fixture()
  try {
    const listed = await run(dir, ['--list'], { OB_TEST_LATE_EVERY: '2' })
    assert.deepEqual(listed.out.trim().split('\n').map((l) => l.split(/\s+/)), [
      ['main', 'dist/test/unit/a_main.test.js'],
      ['long-wait', 'dist/test/unit/b_long.test.js'],
      ['main-late', 'dist/test/unit/c_new.test.js']
    ])
    const passed = await run(dir, [], { OB_TEST_LATE_EVERY: '2' })
    assert.equal(passed.code, 0, passed.out)
    assert.ok(passed.out.indexOf('ok 1 - c_new') > passed.out.indexOf('──── main-late group: 1 files'), passed.out)
    assert.match(passed.out, /main-late group exit 0/)
    const failed = await run(dir, [], { OB_TEST_LATE_EVERY: '2', FAIL_GROUP_FILE: 'c_new' })
    assert.notEqual(failed.code, 0, failed.out)
    assert.match(failed.out, /main group exit 0, long-wait group exit 0, multi-host group exit 0, main-late group exit 1/)
  } finally { rmSync(dir, { recursive: true, force: true }) }
})

test('the two groups run side by side; both report, main first, and the run passes when both pass', async () => {
  const dir = fixture()
  try {
    const { code, out } = await run(dir, [])
    assert.equal(code, 0, out)
    assert.doesNotMatch(out, /──── failures/)
    const longAt = out.indexOf('──── long-wait group: 1 files')
    assert.ok(longAt > out.indexOf('ok 2 - c_new'), out)
    assert.ok(out.indexOf('ok 1 - b_long') > longAt, out)
    assert.match(out, /main group exit 0, long-wait group exit 0/)
  } finally { rmSync(dir, { recursive: true, force: true }) }
})

test('a failure in either group fails the run, and the other group still reports', async () => {
  for (const [failing, line] of [['b_long', /main group exit 0, long-wait group exit 1/], ['a_main', /main group exit 1, long-wait group exit 0/]] as const) {
    const dir = fixture()
    try {
      const { code, out } = await run(dir, [], { FAIL_GROUP_FILE: failing })
      assert.notEqual(code, 0, out)
      assert.match(out, new RegExp(`not ok \\d+ - ${failing}`))
      assert.match(out, line)
      assert.match(out, /ok \d+ - c_new/)
      // the end of the log repeats the failure: its group, its name, where it is and its error
      const summary = out.slice(out.indexOf('──── failures ────'))
      const group = failing === 'a_main' ? 'main' : 'long-wait'
      const entry = `^${group} group:\nnot ok \\d+ - ${failing}\n` +
        ` {4}at .*${failing}\\.test\\.js:\\d+:\\d+\n {4}${failing} failed as asked\n`
      assert.match(summary, new RegExp(entry, 'm'), out)
      assert.ok(summary.indexOf('──── end of failures ────') < summary.indexOf('outbox: main group exit'), out)
    } finally { rmSync(dir, { recursive: true, force: true }) }
  }
})

test('under c8, as npm run test:coverage runs it, the coverage covers the code each group ran', async () => {
  const dir = fixture()
  try {
    const c8 = join(root, 'node_modules', '.bin', 'c8')
    // its own report and temporary directories: the suite itself may run under c8, whose directory this run must
    // neither share nor clear
    const { code, out } = await run(dir, [], {}, [c8, '--reporter=text', '--exclude', 'dist/test/**',
      '--temp-directory', join(dir, 'coverage', 'tmp'), '--reports-dir', join(dir, 'coverage'), 'bash'])
    assert.equal(code, 0, out)
    for (const name of ['a_main', 'b_long', 'c_new']) assert.match(out, new RegExp(`${name}\\.js +\\| +100 `), out)
  } finally { rmSync(dir, { recursive: true, force: true }) }
})

test('the marker the script reads is the one test/README.md documents', () => {
  const script = readFileSync(join(root, 'scripts', 'test_groups.sh'), 'utf8')
  assert.match(script, /MARKER='\^\/\/ test-group: long-wait'/)
  assert.match(readFileSync(join(root, 'test', 'README.md'), 'utf8'), /`\/\/ test-group: long-wait`/)
})
