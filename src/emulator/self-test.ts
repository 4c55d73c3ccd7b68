// POST /api/test (§6.12): exercises the services through the emulator's own HTTP API in a
// throwaway project, deletes the project, and answers with a readable log. Going through HTTP
// (not the store) means the self-test checks what a client sees.

import type { Ctx } from './context.js'

export async function selfTest(ctx: Ctx): Promise<string> {
  const log: string[] = []
  const base = ctx.core.url()
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (ctx.token) headers.cookie = `token=${ctx.token}`
  const call = async (method: string, path: string, body?: unknown): Promise<unknown> => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    })
    const text = await response.text()
    if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`)
    try {
      return JSON.parse(text)
    } catch {
      return text
    }
  }
  const step = async <T>(name: string, run: () => Promise<T>): Promise<T> => {
    try {
      const result = await run()
      log.push(`OK     ${name}`)
      return result
    } catch (error) {
      log.push(`FAILED ${name}\n${(error as Error).stack ?? String(error)}`)
      throw error
    }
  }
  const projectId = `selftest${Date.now().toString(36)}`
  try {
    const project = (await step('project: create', () =>
      call('POST', '/api/server/projects/new', { id: projectId, name: 'Self-test' }),
    )) as { id: string }
    const P = `/api/${encodeURIComponent(project.id)}/live`
    const schema = (await step('schema: create', () =>
      call('POST', `${P}/schemas/new?parentSchemaId=page`),
    )) as { id: string }
    await step('schema: read', () => call('GET', `${P}/schemas/${schema.id}`))
    const content = (await step('content: create', () =>
      call('POST', `${P}/content/new?schemaId=${schema.id}`, { title: 'Test' }),
    )) as {
      id: string
    }
    await step('content: read and list', () =>
      call('GET', `${P}/content/${content.id}`).then(() => call('GET', `${P}/content`)),
    )
    await step('content: delete', () => call('DELETE', `${P}/content/${content.id}`))
    const connection = (await step('connection: create', () => call('POST', `${P}/connections/new`))) as {
      id: string
    }
    await step('connection: delete', () => call('DELETE', `${P}/connections/${connection.id}`))
    const form = (await step('form: create', () => call('POST', `${P}/forms/new`))) as { id: string }
    await step('form: delete', () => call('DELETE', `${P}/forms/${form.id}`))
    await step('schema: delete', () => call('DELETE', `${P}/schemas/${schema.id}`))
    await step('project: delete', () =>
      call('DELETE', `/api/server/projects/${encodeURIComponent(project.id)}`),
    )
    log.push('All tests passed')
  } catch {
    log.push('Self-test failed; the throwaway project may be left behind')
  }
  return `${log.join('\n')}\n`
}
