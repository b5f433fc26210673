import DOMPurify from 'dompurify'

// Style attributes go before the HTML is parsed at all: Zotero's
// bibliography carries inline styles, and even DOMPurify's inert parse
// makes Chromium report each as a CSP violation (style-src 'self').
const styleAttr = /\sstyle\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)/gi

// citationHTML keeps a citation the reference manager formatted (Zotero's
// HTML bibliography entry) readable and harmless: formatting and links
// only.
export function citationHTML(html) {
  return DOMPurify.sanitize(String(html ?? '').replace(styleAttr, ''), {
    ALLOWED_TAGS: ['div', 'span', 'i', 'em', 'b', 'strong', 'sup', 'sub', 'a'],
    ALLOWED_ATTR: ['href'],
  })
}
