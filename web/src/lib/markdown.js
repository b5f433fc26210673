import { Marked } from 'marked'
import DOMPurify from 'dompurify'

// The preview's renderer: raw HTML in the text is shown as text, not
// parsed — even an inert parse of `<img onerror=…>` makes Chromium report
// a CSP violation — and what Markdown itself makes (links included) is
// sanitised. The saved text is rendered and sanitised again by the server.
const escape = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
const md = new Marked({ gfm: true, async: false, renderer: { html: ({ text }) => escape(text) } })

export function renderMarkdown(src) {
  return DOMPurify.sanitize(md.parse(String(src)))
}
