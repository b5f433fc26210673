// Long work (backups, restores, imports) runs as a server job; a request
// that started one may answer before it is done (202 with `job`). waitJob
// follows it until it ends, reporting progress, and resolves with the job's
// result or rejects with its coded error, as the request itself would have.
export async function waitJob(client, job, onProgress = () => {}, intervalMs = 500) {
  let j = job
  for (;;) {
    onProgress(j)
    if (j.state === 'done') return j.result
    if (j.state === 'failed' || j.state === 'cancelled') {
      const err = new Error(j.error || j.state)
      err.code = j.error_code || (j.state === 'cancelled' ? 'job_cancelled' : 'job_failed')
      err.body = { code: err.code, message: j.error, ...(j.error_extra || {}) }
      throw err
    }
    await new Promise((r) => setTimeout(r, intervalMs))
    j = await client.get(`/jobs/${j.id}`)
  }
}

// percent of a job's progress, or null while its total is unknown.
export function percent(j) {
  if (!j || !j.total) return null
  return Math.min(100, Math.round((100 * (j.done || 0)) / j.total))
}
