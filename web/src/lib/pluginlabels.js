// Plugin labels in the interface's language. Plugins declare their labels
// in several languages (pluginsdk v0.5.0); the API gives them as
// {"en": ..., "it": ...} maps beside the default label (GET /plugins,
// GET /plugin-labels). Record reads need none of this: the server already
// answers their labels in the language the client asks for.
import { locale } from './i18n.js'

// localLabel picks the current language's text from labels, then its
// language alone ("pt-BR" → "pt"), then fallback (the plugin's default
// label: what a plugin without translations shows in every language).
export function localLabel(labels, fallback, lang = locale.value) {
  if (labels) {
    if (labels[lang]) return labels[lang]
    const base = lang.split('-')[0]
    if (labels[base]) return labels[base]
  }
  return fallback
}

// featureLabel and columnLabel read a feature as GET /plugins lists it.
export const featureLabel = (f, lang) => localLabel(f?.labels, f?.label || f?.name, lang)
export const columnLabel = (f, name, lang) => localLabel(f?.column_labels?.[name], f?.column_labels?.[name]?.en || name, lang)
