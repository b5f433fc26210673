import { createApp } from 'vue'
import App from './App.vue'
import { router } from './router.js'
import { startRefreshTimer } from './lib/api.js'
import { locale } from './lib/i18n.js'
import { scrollable } from './lib/scrollable.js'
import { installOfflineHook } from './lib/offline/intercept.js'
import './style.css'

document.documentElement.lang = locale.value
// The offline side of the API client (issue 32): tables kept on the device.
installOfflineHook()
createApp(App).use(router).directive('scrollable', scrollable).mount('#app')
startRefreshTimer()

// The service worker (web/pwa.mjs, served by core/webui at /static/sw.js
// with the whole site as its scope): it keeps the app itself on the
// device, so the app opens without a network. Only in the build: the
// dev server has no worker.
if (import.meta.env.PROD && 'serviceWorker' in navigator) {
  navigator.serviceWorker.register('/static/sw.js', { scope: '/' }).catch(() => { /* no worker: online only */ })
}
