// Package secrets encrypts values at rest with an instance key: AES-256-GCM
// from the standard library, each sealed value naming the id of the key
// that sealed it, so keys can be rotated (a keyring holds the current key
// and older ones still needed to open values not yet re-sealed).
//
// A sealed value is "enc:v1:<key id>:<base64url(nonce | ciphertext)>". The
// additional data binds it to where it is stored (the app and the setting),
// so a sealed value copied to another setting or app does not open. A value
// without the prefix is a clear value written before encryption existed: it
// opens as itself, and is sealed on its next write or by the rotation.
//
// The instance key comes from STRATA_SECRET_KEY (base64 of 32 bytes; a
// comma-separated list whose first key is current and the others only
// open), else from the key file <data-dir>/secret.key (one key a line,
// first current), created 0600 at first start.
package secrets
