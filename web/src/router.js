import { createRouter, createWebHistory } from 'vue-router'
import { sessionOf, onSessionEnded } from './lib/api.js'
import Home from './views/Home.vue'
import OAuthCallback from './views/OAuthCallback.vue'
import ResetPassword from './views/ResetPassword.vue'
import AppShell from './views/AppShell.vue'
import Tables from './views/Tables.vue'
import RecordList from './views/RecordList.vue'
import RecordView from './views/RecordView.vue'
import Matrix from './views/Matrix.vue'
import Users from './views/admin/Users.vue'
import ApiKeys from './views/admin/ApiKeys.vue'
import Plugins from './views/admin/Plugins.vue'
import NotFound from './views/NotFound.vue'

// Page routes. The server answers index.html for these paths (core/webui)
// and keeps /api and /<app>/api for the API.
export const routes = [
  { path: '/', name: 'home', component: Home },
  { path: '/oauth-callback', name: 'oauth-callback', component: OAuthCallback },
  { path: '/:app/reset-password', name: 'reset-password', component: ResetPassword, props: true },
  {
    path: '/:app',
    component: AppShell,
    props: true,
    meta: { signedIn: true },
    children: [
      { path: '', name: 'tables', component: Tables },
      { path: 't/:tb', name: 'list', component: RecordList, props: true },
      { path: 't/:tb/new', name: 'new', component: RecordView, props: (r) => ({ ...r.params, id: 'new' }) },
      { path: 't/:tb/:id', name: 'record', component: RecordView, props: true },
      { path: 'matrix/:tb?', name: 'matrix', component: Matrix, props: true },
      { path: 'matrix/:tb/health', name: 'matrix-health', component: () => import('./views/MatrixHealth.vue'), props: true },
      { path: 'sequence/:tb?', name: 'sequence', component: () => import('./views/Sequence.vue'), props: true },
      // Heavier or rarer screens load on demand: the first page stays small.
      { path: 'timeline', name: 'timeline', component: () => import('./views/Timeline.vue'), props: true },
      { path: 'map/:tb?', name: 'map', component: () => import('./views/GeoMap.vue'), props: true },
      { path: 'charts', name: 'charts', component: () => import('./views/Charts.vue'), props: true },
      { path: 'offline', name: 'offline', component: () => import('./views/Offline.vue') },
      { path: 'conflicts', name: 'conflicts', component: () => import('./views/Conflicts.vue') },
      { path: 'queries', name: 'queries', component: () => import('./views/SavedQueries.vue'), props: true },
      { path: 'admin/backups', name: 'backups', component: () => import('./views/admin/Backups.vue') },
      { path: 'admin/logs', name: 'logs', component: () => import('./views/admin/Logs.vue') },
      { path: 'admin/import/geojson', name: 'import-geojson', component: () => import('./views/admin/ImportGeo.vue') },
      { path: 'admin/import/photos', name: 'import-photos', component: () => import('./views/admin/ImportPhotos.vue') },
      { path: 'admin/import', name: 'import', component: () => import('./views/admin/Import.vue') },
      { path: 'admin/templates', name: 'templates', component: () => import('./views/admin/Templates.vue') },
      { path: 'admin/settings', name: 'settings', component: () => import('./views/admin/Settings.vue') },
      { path: 'admin/map-layers', name: 'map-layers', component: () => import('./views/admin/MapLayers.vue') },
      { path: 'publish', name: 'publish', component: () => import('./views/admin/Publish.vue') },
      { path: 'admin/references', name: 'references', component: () => import('./views/admin/References.vue') },
      { path: 'admin/tables', name: 'schema', component: () => import('./views/admin/Schema.vue') },
      { path: 'admin/users', name: 'users', component: Users },
      { path: 'admin/keys', name: 'keys', component: ApiKeys },
      { path: 'admin/plugins', name: 'plugins', component: Plugins },
    ],
  },
  { path: '/:rest(.*)*', name: 'not-found', component: NotFound },
]

export const router = createRouter({ history: createWebHistory('/'), routes })

router.beforeEach((to) => {
  if (to.matched.some((r) => r.meta.signedIn) && !sessionOf(to.params.app)) {
    return { name: 'home', query: { app: to.params.app, next: to.fullPath } }
  }
})

// A 401 on any call: back to the sign-in of that app, then back here.
onSessionEnded((app) => {
  const cur = router.currentRoute.value
  if (cur.params.app === app) router.push({ name: 'home', query: { app, next: cur.fullPath, ended: '1' } })
})
