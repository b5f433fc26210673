import { createApp } from 'vue'
import App from './App.vue'
import { router } from './router.js'
import { startRefreshTimer } from './lib/api.js'
import { locale } from './lib/i18n.js'
import { scrollable } from './lib/scrollable.js'
import './style.css'

document.documentElement.lang = locale.value
createApp(App).use(router).directive('scrollable', scrollable).mount('#app')
startRefreshTimer()
