import { onBeforeUnmount, ref } from 'vue'

// useCombobox is the state and keyboard of a search-as-you-type list (an
// ARIA combobox) shared by the record pickers: fetch(q) resolves to the
// options ({label, ...}; undefined: nothing to search yet), onPick(o) is
// told the chosen one. Typing searches 200 ms after the last key; arrows
// move, Enter picks, Escape closes; leaving the box closes the list after
// a click on it had time to land.
//
// The keys act only on the results of the text now in the box (issue 30: a
// fast "US 4", ArrowDown, Enter picked US 10 from the list of an earlier
// text). Every search is numbered and only the newest one's answer is
// shown, so a slow answer for an older text never replaces a newer one;
// while the box's text has no answer yet, ArrowDown asks for it at once and
// Enter waits for it, then picks the option whose label is the text (else
// the first), never a row of the list of another text.
export function useCombobox(fetch, onPick, initial = '') {
  const text = ref(initial)
  const options = ref([])
  const open = ref(false)
  const active = ref(-1)
  const pending = ref(false) // a search for the current text is on its way
  let resultsFor = null // the text options answer
  let timer = null
  let seq = 0
  let enterWaiting = false

  const fold = (s) => String(s ?? '').trim().toLowerCase()
  const stale = () => resultsFor === null || resultsFor !== text.value

  async function search() {
    clearTimeout(timer)
    timer = null
    const mine = ++seq
    const q = text.value
    pending.value = true
    let list
    try {
      list = await fetch(q)
    } catch {
      list = []
    }
    if (mine !== seq || q !== text.value) return // an older text's answer
    pending.value = false
    if (list === undefined) { enterWaiting = false; return }
    options.value = list
    resultsFor = q
    open.value = true
    active.value = list.length ? 0 : -1
    if (enterWaiting) {
      enterWaiting = false
      const exact = list.find((o) => fold(o.label) === fold(q))
      const o = exact || list[active.value]
      if (o) choose(o)
    }
  }
  function typed() {
    enterWaiting = false
    clearTimeout(timer)
    pending.value = true
    timer = setTimeout(search, 200)
  }
  function choose(o) {
    enterWaiting = false
    seq++ // an answer still on its way is for a text no longer there
    clearTimeout(timer)
    timer = null
    pending.value = false
    onPick(o)
    text.value = o.label
    resultsFor = o.label
    options.value = [o]
    open.value = false
  }
  function onKey(e) {
    if (e.key === 'ArrowDown') {
      e.preventDefault()
      if (stale()) { if (!(pending.value && !timer)) search() } // ask now for the text in the box
      else if (!open.value) open.value = true
      else active.value = Math.min(active.value + 1, options.value.length - 1)
    } else if (e.key === 'ArrowUp') {
      e.preventDefault()
      if (!stale()) active.value = Math.max(active.value - 1, 0)
    } else if (e.key === 'Enter') {
      if (stale() || pending.value) {
        // Not the list of this text: wait for it rather than pick from another.
        e.preventDefault()
        enterWaiting = true
        if (!pending.value || timer) search()
      } else if (open.value && options.value[active.value]) { e.preventDefault(); choose(options.value[active.value]) }
    } else if (e.key === 'Escape') { enterWaiting = false; open.value = false }
  }
  function onBlur() { setTimeout(() => { open.value = false }, 150) }
  // resultsOf: the options already answered for text q, or null.
  function resultsOf(q) { return resultsFor === q && !pending.value ? options.value : null }
  onBeforeUnmount(() => { clearTimeout(timer); seq++ })
  return { text, options, open, active, pending, search, typed, choose, onKey, onBlur, resultsOf }
}
