package apps

// OAuthProviders are the identity providers an app can configure (SPEC §1).
var OAuthProviders = []string{"idp_a", "idp_b"}

// Setting keys of a provider's credentials.
func OAuthClientIDKey(provider string) string     { return "oauth." + provider + ".client_id" }
func OAuthClientSecretKey(provider string) string { return "oauth." + provider + ".client_secret" }

// ConfiguredOAuthProviders returns the providers whose client id and secret
// are both set in settings, in a fixed order.
func ConfiguredOAuthProviders(settings map[string]string) []string {
	out := []string{}
	for _, p := range OAuthProviders {
		if settings[OAuthClientIDKey(p)] != "" && settings[OAuthClientSecretKey(p)] != "" {
			out = append(out, p)
		}
	}
	return out
}
