// A small dictionary module: English and Italian, the language chosen by
// the user (kept in localStorage) or taken from the browser.
import { ref } from 'vue'

const en = {
  'app.title': 'Strata',
  'app.choose': 'Choose a database',
  'app.none': 'No databases on this server yet.',
  'app.not_found': 'There is no database called “{app}”.',
  'lang.label': 'Language',
  'signin.title': 'Sign in to {app}',
  'signin.email': 'Email',
  'signin.password': 'Password',
  'signin.submit': 'Sign in',
  'signin.with': 'Sign in with {provider}',
  'signin.forgot': 'Forgot your password?',
  'signin.back': 'Back to the databases',
  'signout': 'Sign out',
  'reset.request_title': 'Reset your password',
  'reset.request_help': 'We will mail you a link to choose a new password.',
  'reset.request_submit': 'Send the link',
  'reset.requested': 'If an account has this email, a message with a reset link has been sent to it.',
  'reset.title': 'Choose a new password',
  'reset.new_password': 'New password',
  'reset.repeat': 'Repeat the new password',
  'reset.mismatch': 'The two passwords differ.',
  'reset.submit': 'Save the password',
  'reset.done': 'Your password has been changed. You can sign in now.',
  'reset.bad_link': 'This link is incomplete: ask for a new one.',
  'oauth.working': 'Completing the sign-in…',
  'oauth.no_account': 'No account is linked to this identity yet.',
  'oauth.link_title': 'Link it to your account',
  'oauth.link_submit': 'Link and sign in',
  'oauth.register_title': 'Or ask for a new account',
  'oauth.register_submit': 'Ask for an account',
  'oauth.registered': 'Your request has been sent. An administrator will enable your account.',
  'oauth.failed': 'The sign-in did not complete.',
  'nav.tables': 'Tables',
  'nav.matrix': 'Harris matrix',
  'nav.admin': 'Administration',
  'nav.users': 'Users',
  'nav.keys': 'API keys',
  'nav.plugins': 'Plugin features',
  'nav.skip': 'Skip to the content',
  'home.welcome': 'Choose a table to browse its records.',
  'list.search': 'Quick search',
  'list.search_go': 'Search',
  'list.columns': 'Columns',
  'list.filter': 'Filter',
  'list.total': '{n} records',
  'list.page': 'Page {page} of {pages}',
  'list.prev': 'Previous',
  'list.next': 'Next',
  'list.per_page': 'Rows per page',
  'list.new': 'New record',
  'list.empty': 'No records match.',
  'list.sort_by': 'Sort by {field}',
  'list.export': 'Export CSV',
  'filter.add_condition': 'Add condition',
  'filter.add_group': 'Add group',
  'filter.remove': 'Remove',
  'filter.apply': 'Apply filter',
  'filter.clear': 'Clear',
  'filter.all': 'all of',
  'filter.any': 'any of',
  'filter.match': 'Match',
  'filter.field': 'Field',
  'filter.operator': 'Operator',
  'filter.value': 'Value',
  'filter.list_hint': 'values separated by commas',
  'op._eq': 'is', 'op._neq': 'is not', 'op._icontains': 'contains', 'op._ncontains': 'does not contain',
  'op._contains': 'contains (case-sensitive)', 'op._starts_with': 'starts with', 'op._nstarts_with': 'does not start with',
  'op._ends_with': 'ends with', 'op._nends_with': 'does not end with', 'op._gt': '>', 'op._lt': '<', 'op._gte': '≥',
  'op._lte': '≤', 'op._between': 'between', 'op._in': 'is one of', 'op._nin': 'is none of', 'op._empty': 'is empty',
  'op._nempty': 'is not empty', 'op._null': 'has no value', 'op._nnull': 'has a value',
  'rec.edit': 'Edit', 'rec.save': 'Save', 'rec.cancel': 'Cancel', 'rec.delete': 'Delete',
  'rec.duplicate': 'Duplicate', 'rec.versions': 'Versions', 'rec.saved': 'Saved.',
  'rec.deleted': 'Record deleted.', 'rec.confirm_delete': 'Delete this record?',
  'rec.duplicated': 'Copy created.', 'rec.new_title': 'New record in {table}',
  'rec.back': 'Back to the list', 'rec.relations': 'Stratigraphic relations', 'rec.links': 'Linked records',
  'rec.preview': 'Preview', 'rec.write': 'Write', 'rec.yes': 'Yes', 'rec.no': 'No', 'rec.none': '—',
  'rec.search_lookup': 'Search {table}', 'rec.add_row': 'Add a row', 'rec.remove_row': 'Remove the row',
  'rec.fix_errors': 'Some values are not valid: see the fields marked below.',
  'rec.changed_elsewhere': 'Someone else changed this record meanwhile: reload it and redo your change.',
  'ver.none': 'No earlier versions.', 'ver.show': 'Compare', 'ver.restore': 'Restore this version',
  'ver.restored': 'Version restored.', 'ver.field': 'Field', 'ver.then': 'In this version', 'ver.now': 'Now',
  'ver.op': '{op} on {time}', 'ver.no_changes': 'Same as now.',
  'c14.title': 'Radiocarbon dates', 'c14.curve_of': 'Calibrated date of {lab}',
  'c14.sigma1': '1σ (68.3%)', 'c14.sigma2': '2σ (95.4%)', 'c14.calbp': 'cal BP', 'c14.years': 'Calendar years',
  'c14.prob': 'Probability', 'c14.loading': 'Calibrating…',
  'matrix.title': 'Harris matrix of {table}', 'matrix.table': 'Table', 'matrix.empty': 'No units.',
  'matrix.legend': 'Lines go from the later unit (above) to the earlier one (below); dashed: same as / bound to.',
  'admin.users': 'Users', 'admin.name': 'Name', 'admin.email': 'Email', 'admin.privilege': 'Privilege',
  'admin.password': 'Password', 'admin.add_user': 'Add a user', 'admin.user_saved': 'User saved.',
  'admin.table_privileges': 'Table privileges of {name}', 'admin.table': 'Table', 'admin.add_privilege': 'Set the privilege',
  'admin.privilege_saved': 'Table privilege saved.', 'admin.close': 'Close', 'admin.privileges': 'Table privileges',
  'admin.keys': 'API keys', 'admin.label': 'Label', 'admin.create_key': 'Create a key', 'admin.key_shown_once': 'Copy the key now: it will not be shown again.',
  'admin.revoke': 'Revoke', 'admin.active': 'Active', 'admin.revoked': 'Revoked', 'admin.created': 'Created',
  'admin.plugins': 'Plugin features per table', 'admin.feature_on': 'On', 'admin.feature_off': 'Off',
  'admin.feature_adds': 'Adds: {what}', 'admin.no_plugins': 'No plugins are running on this server.',
  'admin.activated': '{feature} is now on for {table}.', 'admin.deactivated': '{feature} is now off for {table}.',
  'priv.1': 'super admin', 'priv.10': 'admin', 'priv.20': 'writer', 'priv.25': 'self writer', 'priv.30': 'reader', 'priv.40': 'pending',
  'busy': 'Loading…', 'error.generic': 'Something went wrong ({code}).', 'error.network': 'The server cannot be reached.',
  'error.login_data_not_valid': 'Wrong email or password.', 'error.account_locked': 'Too many failed attempts: the account is locked for a while.',
  'error.email_password_needed': 'Enter your email and password.', 'error.not_enough_privilege': 'You do not have the privilege to do this.',
  'error.app_not_found': 'There is no such database.', 'error.rate_limited': 'Too many attempts: wait a moment and try again.',
  'error.token_invalidated': 'Your session has ended: sign in again.', 'error.unauthenticated': 'Your session has ended: sign in again.',
  'error.invalid_or_expired_pending': 'The sign-in took too long: start again.', 'error.invalid_state': 'The sign-in took too long or was tampered with: start again.',
  'error.oauth_error': 'The identity provider refused the sign-in.', 'error.no_account': 'No account is linked to this identity.',
  'error.provider_not_configured': 'This sign-in provider is not set up.', 'error.email_not_configured': 'This server cannot send email.',
  'error.invalid_reset_token': 'This link is not valid any more: ask for a new one.', 'error.password_too_short': 'The password needs at least 8 characters.',
  'error.password_too_long': 'The password is too long.', 'error.validation_failed': 'Some values are not valid.',
  'error.invalid_filter': 'The filter is not valid: {detail}', 'error.invalid_field': 'Unknown field.', 'error.record_not_found': 'The record does not exist.',
  'error.record_in_use': 'Other records depend on this one.', 'error.email_present': 'Another account has this email.',
  'error.invalid_privilege': 'Choose a privilege.', 'error.plugin_unavailable': 'The plugin is not running.',
  'error.parameter_missing': 'Something required is missing ({parameter}).', 'error.email_not_valid': 'This is not an email address.',
  'error.oauth_identity_already_linked': 'This identity is already linked to an account.', 'error.registration_not_available': 'This database does not accept new accounts.',
  'error.precondition_failed': 'Someone else changed this record meanwhile: reload it and redo your change.',
  'error.last_super_admin': 'The last super admin cannot be demoted.', 'error.table_not_found': 'The table does not exist.',
  'rule.required': 'Required.', 'rule.no_dupl': 'Another record has this value.', 'rule.type': 'Not a valid value for this field.',
  'rule.int': 'A whole number is needed.', 'rule.min': 'Too small.', 'rule.max': 'Too large.', 'rule.max_length': 'Too long.',
  'rule.pattern': 'Not in the expected form.', 'rule.lookup': 'Not a record you can choose.', 'rule.link': 'Not an allowed link.',
}

const it = {
  'app.choose': 'Scegli una banca dati', 'app.none': 'Nessuna banca dati su questo server.',
  'app.not_found': 'Non esiste una banca dati “{app}”.', 'lang.label': 'Lingua',
  'signin.title': 'Accedi a {app}', 'signin.email': 'Email', 'signin.password': 'Password', 'signin.submit': 'Accedi',
  'signin.with': 'Accedi con {provider}', 'signin.forgot': 'Password dimenticata?', 'signin.back': 'Torna alle banche dati',
  'signout': 'Esci', 'reset.request_title': 'Reimposta la password', 'reset.request_help': 'Ti invieremo un link per scegliere una nuova password.',
  'reset.request_submit': 'Invia il link', 'reset.requested': 'Se un account ha questa email, gli è stato inviato un messaggio con il link.',
  'reset.title': 'Scegli una nuova password', 'reset.new_password': 'Nuova password', 'reset.repeat': 'Ripeti la nuova password',
  'reset.mismatch': 'Le due password non coincidono.', 'reset.submit': 'Salva la password', 'reset.done': 'La password è stata cambiata. Ora puoi accedere.',
  'reset.bad_link': 'Il link è incompleto: chiedine uno nuovo.', 'oauth.working': 'Accesso in corso…',
  'oauth.no_account': 'Nessun account è ancora collegato a questa identità.', 'oauth.link_title': 'Collegala al tuo account',
  'oauth.link_submit': 'Collega e accedi', 'oauth.register_title': 'Oppure chiedi un nuovo account', 'oauth.register_submit': 'Chiedi un account',
  'oauth.registered': 'Richiesta inviata. Un amministratore abiliterà il tuo account.', 'oauth.failed': 'L’accesso non è stato completato.',
  'nav.tables': 'Tabelle', 'nav.matrix': 'Matrix di Harris', 'nav.admin': 'Amministrazione', 'nav.users': 'Utenti',
  'nav.keys': 'Chiavi API', 'nav.plugins': 'Funzioni dei plugin', 'nav.skip': 'Vai al contenuto',
  'home.welcome': 'Scegli una tabella per sfogliarne le schede.',
  'list.search': 'Ricerca veloce', 'list.search_go': 'Cerca', 'list.columns': 'Colonne', 'list.filter': 'Filtro',
  'list.total': '{n} schede', 'list.page': 'Pagina {page} di {pages}', 'list.prev': 'Precedente', 'list.next': 'Successiva',
  'list.per_page': 'Righe per pagina', 'list.new': 'Nuova scheda', 'list.empty': 'Nessuna scheda corrisponde.',
  'list.sort_by': 'Ordina per {field}', 'list.export': 'Esporta CSV',
  'filter.add_condition': 'Aggiungi condizione', 'filter.add_group': 'Aggiungi gruppo', 'filter.remove': 'Rimuovi',
  'filter.apply': 'Applica il filtro', 'filter.clear': 'Azzera', 'filter.all': 'tutte le condizioni', 'filter.any': 'almeno una condizione',
  'filter.match': 'Soddisfa', 'filter.field': 'Campo', 'filter.operator': 'Operatore', 'filter.value': 'Valore',
  'filter.list_hint': 'valori separati da virgole',
  'op._eq': 'è', 'op._neq': 'non è', 'op._icontains': 'contiene', 'op._ncontains': 'non contiene',
  'op._contains': 'contiene (maiuscole distinte)', 'op._starts_with': 'inizia con', 'op._nstarts_with': 'non inizia con',
  'op._ends_with': 'finisce con', 'op._nends_with': 'non finisce con', 'op._between': 'tra', 'op._in': 'è uno di',
  'op._nin': 'non è nessuno di', 'op._empty': 'è vuoto', 'op._nempty': 'non è vuoto', 'op._null': 'non ha valore', 'op._nnull': 'ha un valore',
  'rec.edit': 'Modifica', 'rec.save': 'Salva', 'rec.cancel': 'Annulla', 'rec.delete': 'Elimina', 'rec.duplicate': 'Duplica',
  'rec.versions': 'Versioni', 'rec.saved': 'Salvato.', 'rec.deleted': 'Scheda eliminata.', 'rec.confirm_delete': 'Eliminare questa scheda?',
  'rec.duplicated': 'Copia creata.', 'rec.new_title': 'Nuova scheda in {table}', 'rec.back': 'Torna all’elenco',
  'rec.relations': 'Rapporti stratigrafici', 'rec.links': 'Schede collegate', 'rec.preview': 'Anteprima', 'rec.write': 'Scrivi',
  'rec.yes': 'Sì', 'rec.no': 'No', 'rec.search_lookup': 'Cerca in {table}', 'rec.add_row': 'Aggiungi una riga', 'rec.remove_row': 'Rimuovi la riga',
  'rec.fix_errors': 'Alcuni valori non sono validi: vedi i campi segnati.',
  'rec.changed_elsewhere': 'Qualcun altro ha modificato la scheda nel frattempo: ricaricala e ripeti la modifica.',
  'ver.none': 'Nessuna versione precedente.', 'ver.show': 'Confronta', 'ver.restore': 'Ripristina questa versione',
  'ver.restored': 'Versione ripristinata.', 'ver.field': 'Campo', 'ver.then': 'In questa versione', 'ver.now': 'Ora',
  'ver.op': '{op} il {time}', 'ver.no_changes': 'Uguale a ora.',
  'c14.title': 'Datazioni al radiocarbonio', 'c14.curve_of': 'Data calibrata di {lab}', 'c14.years': 'Anni di calendario',
  'c14.prob': 'Probabilità', 'c14.loading': 'Calibrazione…',
  'matrix.title': 'Matrix di Harris di {table}', 'matrix.table': 'Tabella', 'matrix.empty': 'Nessuna unità.',
  'matrix.legend': 'Le linee vanno dall’unità più recente (sopra) a quella più antica (sotto); tratteggio: uguale a / si lega a.',
  'admin.users': 'Utenti', 'admin.name': 'Nome', 'admin.email': 'Email', 'admin.privilege': 'Privilegio', 'admin.password': 'Password',
  'admin.add_user': 'Aggiungi un utente', 'admin.user_saved': 'Utente salvato.', 'admin.table_privileges': 'Privilegi per tabella di {name}',
  'admin.table': 'Tabella', 'admin.add_privilege': 'Imposta il privilegio', 'admin.privilege_saved': 'Privilegio salvato.',
  'admin.close': 'Chiudi', 'admin.privileges': 'Privilegi per tabella', 'admin.keys': 'Chiavi API', 'admin.label': 'Etichetta',
  'admin.create_key': 'Crea una chiave', 'admin.key_shown_once': 'Copia la chiave ora: non sarà più mostrata.',
  'admin.revoke': 'Revoca', 'admin.active': 'Attiva', 'admin.revoked': 'Revocata', 'admin.created': 'Creata',
  'admin.plugins': 'Funzioni dei plugin per tabella', 'admin.feature_on': 'Attiva', 'admin.feature_off': 'Spenta',
  'admin.feature_adds': 'Aggiunge: {what}', 'admin.no_plugins': 'Nessun plugin è attivo su questo server.',
  'admin.activated': '{feature} ora è attiva per {table}.', 'admin.deactivated': '{feature} ora è spenta per {table}.',
  'priv.1': 'super amministratore', 'priv.10': 'amministratore', 'priv.20': 'scrittore', 'priv.25': 'scrittore delle proprie schede',
  'priv.30': 'lettore', 'priv.40': 'in attesa',
  'busy': 'Caricamento…', 'error.generic': 'Qualcosa non ha funzionato ({code}).', 'error.network': 'Il server non risponde.',
  'error.login_data_not_valid': 'Email o password errate.', 'error.account_locked': 'Troppi tentativi falliti: l’account è bloccato per un po’.',
  'error.email_password_needed': 'Inserisci email e password.', 'error.not_enough_privilege': 'Non hai il privilegio per farlo.',
  'error.app_not_found': 'Questa banca dati non esiste.', 'error.rate_limited': 'Troppi tentativi: attendi un momento e riprova.',
  'error.token_invalidated': 'La sessione è terminata: accedi di nuovo.', 'error.unauthenticated': 'La sessione è terminata: accedi di nuovo.',
  'error.invalid_or_expired_pending': 'L’accesso ha richiesto troppo tempo: ricomincia.', 'error.invalid_state': 'L’accesso ha richiesto troppo tempo o è stato alterato: ricomincia.',
  'error.oauth_error': 'Il fornitore di identità ha rifiutato l’accesso.', 'error.no_account': 'Nessun account è collegato a questa identità.',
  'error.provider_not_configured': 'Questo fornitore di accesso non è configurato.', 'error.email_not_configured': 'Questo server non può inviare email.',
  'error.invalid_reset_token': 'Il link non è più valido: chiedine uno nuovo.', 'error.password_too_short': 'La password deve avere almeno 8 caratteri.',
  'error.password_too_long': 'La password è troppo lunga.', 'error.validation_failed': 'Alcuni valori non sono validi.',
  'error.invalid_filter': 'Il filtro non è valido: {detail}', 'error.invalid_field': 'Campo sconosciuto.', 'error.record_not_found': 'La scheda non esiste.',
  'error.record_in_use': 'Altre schede dipendono da questa.', 'error.email_present': 'Un altro account ha questa email.',
  'error.invalid_privilege': 'Scegli un privilegio.', 'error.plugin_unavailable': 'Il plugin non è attivo.',
  'error.parameter_missing': 'Manca un dato richiesto ({parameter}).', 'error.email_not_valid': 'Non è un indirizzo email.',
  'error.oauth_identity_already_linked': 'Questa identità è già collegata a un account.', 'error.registration_not_available': 'Questa banca dati non accetta nuovi account.',
  'error.precondition_failed': 'Qualcun altro ha modificato la scheda nel frattempo: ricaricala e ripeti la modifica.',
  'error.last_super_admin': 'L’ultimo super amministratore non può essere declassato.', 'error.table_not_found': 'La tabella non esiste.',
  'rule.required': 'Obbligatorio.', 'rule.no_dupl': 'Un’altra scheda ha questo valore.', 'rule.type': 'Valore non valido per questo campo.',
  'rule.int': 'Serve un numero intero.', 'rule.min': 'Troppo piccolo.', 'rule.max': 'Troppo grande.', 'rule.max_length': 'Troppo lungo.',
  'rule.pattern': 'Non nella forma attesa.', 'rule.lookup': 'Non è una scheda che puoi scegliere.', 'rule.link': 'Non è un link ammesso.',
}

export const dictionaries = { en, it }
export const languages = [{ code: 'en', name: 'English' }, { code: 'it', name: 'Italiano' }]

function initial() {
  try {
    const saved = localStorage.getItem('strata.lang')
    if (saved && dictionaries[saved]) return saved
  } catch { /* storage unavailable */ }
  const nav = (typeof navigator !== 'undefined' && navigator.language) || 'en'
  return nav.toLowerCase().startsWith('it') ? 'it' : 'en'
}

export const locale = ref(initial())

export function setLocale(code) {
  if (!dictionaries[code]) return
  locale.value = code
  try { localStorage.setItem('strata.lang', code) } catch { /* ignore */ }
  if (typeof document !== 'undefined') document.documentElement.lang = code
}

// t looks a key up in the current language, then in English; {name}
// placeholders take params. An unknown key shows as itself.
export function t(key, params = {}) {
  const s = dictionaries[locale.value][key] ?? en[key] ?? key
  return s.replace(/\{(\w+)\}/g, (m, k) => (params[k] ?? m))
}

// errorText is the message of an API error code (with its details).
export function errorText(err) {
  if (!err) return ''
  if (err.network) return t('error.network')
  const code = err.code || 'internal_error'
  const key = 'error.' + code
  if (dictionaries.en[key]) return t(key, { detail: err.body?.detail ?? err.message ?? '', parameter: err.body?.parameter ?? '' })
  return t('error.generic', { code })
}
