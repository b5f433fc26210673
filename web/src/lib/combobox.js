import { onBeforeUnmount, ref } from 'vue'

// useCombobox is the state and keyboard of a search-as-you-type list (an
// ARIA combobox) shared by the record pickers: fetch(q) resolves to the
// options ({label, ...}; undefined: nothing to search yet), onPick(o) is
// told the chosen one. Typing searches 200 ms after the last key; arrows
// move, Enter picks, Escape closes; leaving the box closes the list after
// a click on it had time to land.
export function useCombobox(fetch, onPick, initial = '') {
  const text = ref(initial)
  const options = ref([])
  const open = ref(false)
  const active = ref(-1)
  let timer = null

  async function search() {
    let list
    try {
      list = await fetch(text.value)
    } catch {
      options.value = []
      return
    }
    if (list === undefined) return
    options.value = list
    open.value = true
    active.value = list.length ? 0 : -1
  }
  function typed() {
    clearTimeout(timer)
    timer = setTimeout(search, 200)
  }
  function choose(o) {
    onPick(o)
    text.value = o.label
    open.value = false
  }
  function onKey(e) {
    if (e.key === 'ArrowDown') { e.preventDefault(); if (!open.value) search(); else active.value = Math.min(active.value + 1, options.value.length - 1) }
    else if (e.key === 'ArrowUp') { e.preventDefault(); active.value = Math.max(active.value - 1, 0) }
    else if (e.key === 'Enter' && open.value && options.value[active.value]) { e.preventDefault(); choose(options.value[active.value]) }
    else if (e.key === 'Escape') open.value = false
  }
  function onBlur() { setTimeout(() => { open.value = false }, 150) }
  onBeforeUnmount(() => clearTimeout(timer))
  return { text, options, open, active, search, typed, choose, onKey, onBlur }
}
