import { marked } from 'marked'
import DOMPurify from 'dompurify'

// renderMarkdown: Markdown to HTML with nothing executable left in it.
export function renderMarkdown(src) {
  return DOMPurify.sanitize(marked.parse(String(src), { async: false, gfm: true, breaks: false }))
}
