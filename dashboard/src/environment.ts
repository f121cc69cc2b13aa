import { h } from './dom.ts'

export type Environment = 'live' | 'test'

/**
 * The live/test switch of Activity, Statistics and Suppressions: sandbox (`ob_test_` key) traffic is kept apart
 * by the API and shown only when `test` is chosen. Calls `onChange` with the new value.
 */
export interface EnvironmentSwitch { label: HTMLElement, select: HTMLSelectElement, value: () => Environment }

export function environmentSwitch (id: string, onChange: (env: Environment) => void): EnvironmentSwitch {
  const select = h('select', { id, name: 'environment' },
    h('option', { value: 'live' }, 'live'), h('option', { value: 'test' }, 'test (sandbox)')) as HTMLSelectElement
  const value = (): Environment => select.value === 'test' ? 'test' : 'live'
  select.onchange = () => { onChange(value()) }
  return { label: h('label', { for: id }, 'Environment'), select, value }
}
