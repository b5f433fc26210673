import { ref, watch } from 'vue'
import { useRoute } from 'vue-router'

// useViewError is a view's error banner. It clears itself whenever the
// route changes — another page, another record, a query step such as
// "Forgot password" — because an error belongs to what the user was doing
// when it happened, not to where they went next (issue 30: banners stayed
// after Cancel, after "Forgot password", after Duplicate). Views still
// clear it themselves for a change of mode that is not a route (Cancel,
// Edit).
export function useViewError() {
  const error = ref(null)
  const route = useRoute()
  watch(() => route.fullPath, () => { error.value = null })
  return error
}
