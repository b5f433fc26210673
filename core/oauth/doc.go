// Package oauth is the OAuth 2.0 authorization-code sign-in with the two
// identity providers (SPEC §3.3, §5.5; CONTRACT §3, §8): the signed,
// stateless `state` and `pending` tokens, the provider adapters built on
// golang.org/x/oauth2, the client-origin rules, and how an identity finds
// or joins an account. The HTTP endpoints are in core/server/oauth.go;
// this package knows nothing of gin.
//
// # Providers
//
// idp_a is OpenID Connect: scope "openid email profile", client
// authentication client_secret_basic, identity from the userinfo endpoint
// (`sub`, `email`, `email_verified`, `name`), cross-checked with the
// id_token's `sub` and `aud` when one is returned. Defaults: Google's
// endpoints. idp_b is ORCID: scope "/authenticate", credentials as form
// parameters, the researcher iD (`orcid`) and `name` read from the token
// response itself; no email, no userinfo call. Defaults: orcid.org. Every
// endpoint can be overridden from the environment (OAUTH_IDP_A_AUTH_URL,
// OAUTH_IDP_A_TOKEN_URL, OAUTH_IDP_A_USERINFO_URL, OAUTH_IDP_B_AUTH_URL,
// OAUTH_IDP_B_TOKEN_URL). Client id and secret are per app (settings or the
// app's configuration file), read on every request. Provider tokens live
// only for the duration of the callback: nothing of them is stored or
// logged; the only credential that leaves is the service's own session JWT.
//
// # Tokens
//
// `state` and `pending` are base64url(JSON) "." hex(HMAC-SHA256), keyed
// with the app's JWT secret, valid ten minutes, verified in constant time
// before their payload is even decoded. Each carries its kind (`typ`) and
// app, so neither can stand in for the other nor be used with another app
// (whose key also differs). The payload part never contains a ".", while
// every JWT signing input does, so a session token's signature can never
// authenticate one of them. They are stateless: a pending token can be
// retried within its TTL (a wrong password does not spend it), and what
// makes its use one-off is the unique (oauth_provider, oauth_sub) index:
// once the identity is on a row, further link or register attempts answer
// oauth_identity_already_linked.
//
// # Security review
//
// Compared with the account-takeover patterns known from OAuth sign-in in
// comparable systems:
//
//   - Pre-registered email (an attacker creates an account with the
//     victim's address before the victim first signs in with a provider, or
//     an attacker's provider account claims the victim's address): an
//     account is matched by email only for idp_a, only when idp_a states
//     email_verified = true, and only if the account is approved (privilege
//     < 40) and carries no external identity yet. Unverified addresses
//     never match, so an attacker cannot claim an account through a
//     provider account with an unconfirmed address. A pending account is
//     never linked automatically: self-registration creates pending
//     accounts for any address without proving it, so an attacker's
//     pre-registration never becomes a path into, or out of, the victim's
//     provider identity. The residual trust is in idp_a's verification of
//     email ownership, which is the documented behaviour of SPEC §5.5.
//   - Linking by password: link needs the account's password, checked by
//     the same routine as password login (Authenticator.Login), so the
//     five-failure lock applies, failures are counted per email whether
//     the account exists or not, and the timing for unknown emails matches
//     known ones. The pending token proves only that the provider
//     authenticated someone; it opens nothing by itself. A pending (40)
//     account gets no identity and no session through link.
//   - A second provider, or a second identity of the same provider, for the
//     same email: an account holds one (provider, sub) pair. Neither the
//     email match nor link ever replaces an existing identity (link answers
//     oauth_identity_already_linked with reason account_has_identity), so a
//     second provider account claiming the same address cannot displace the
//     owner's sign-in or hijack the account; an admin clears an identity in
//     user administration when a change is really wanted. The same sub at
//     another provider is another identity.
//   - OAuth registration: register proves the identity (the pending token)
//     but not the email typed with it, exactly like password
//     self-registration; the account is pending (40) until an admin
//     approves it, the confirmation mail goes to that address (so its owner
//     learns of it), and an email already in use answers email_present
//     rather than attaching anything to the existing account.
//   - State fixation and CSRF: the state is signed and bound to app,
//     client origin, provider and a random nonce, and expires in ten
//     minutes; a forged or edited state fails its HMAC, and a state of one
//     provider is refused at the other's callback. Residual risk: with no
//     cookies (sessions are stateless by SPEC §5.1) the state cannot be
//     bound to the browser that started the flow, so login CSRF (a victim
//     lured into completing the attacker's own flow ends up signed in as the
//     attacker) is limited only by the ten-minute TTL and the provider's
//     single-use codes. Binding it to the browser would need a client-held
//     secret echoed back to /oauth-callback, which the contract does not
//     have. PKCE is not used: with a stateless server its verifier would
//     have to travel in the state next to the code, adding nothing.
//   - Open redirect and token theft by redirect: the callback sends the
//     browser, and any token, only to an origin the service trusts. The
//     origin enters the flow through the redirect endpoint, where it must
//     be in the allowlist (the request's own scheme and host, honouring
//     X-Forwarded-Proto; SERVICE_PUBLIC_URL; the app's
//     oauth_allowed_origins), compared after normalisation so look-alikes
//     (suffixes, user info, other schemes) never match. At the callback the
//     origin comes only from an authentic state and is checked against the
//     allowlist again for the callback request: this defeats a state minted
//     by sending the redirect endpoint a forged Host or X-Forwarded-Proto
//     (which would make an attacker's host "the request's own"), because the
//     victim's browser reaches the callback through the real host. A state
//     that fails its signature, is missing, or names an origin no longer
//     allowed sends the browser to the service's own origin
//     (SERVICE_PUBLIC_URL, else the request's scheme and host), never to an
//     address named by the request. Query parameters of the callback other
//     than code and state are ignored.
//   - Token leakage: the request log records the path without the query
//     string (server.logRequests; test TestOAuthSecretsStayOutOfLogs), so
//     codes, states, pending and session tokens never reach it; exchange
//     failures log the step and the provider's HTTP status or OAuth error
//     code, never the provider's response body; client secrets are never
//     logged or returned. Callback redirects carry Cache-Control: no-store
//     and Referrer-Policy: no-referrer. The session token does travel in
//     the redirect's query string as SPEC §5.5 prescribes; the front end
//     should remove it from the address bar and history at once.
//   - Code injection and replay: codes are exchanged once with the client
//     secret; a replayed or foreign code fails at the provider
//     (oauth_error). For idp_a the id_token's aud must be our client id and
//     its sub must equal userinfo's, so tokens issued to another client are
//     refused.
package oauth
