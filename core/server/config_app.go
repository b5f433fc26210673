package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/oauth"
	"github.com/strata-archaeo/strata/core/wire"
)

// Limits of the application properties.
const (
	maxDefinitionLength = 500 // as at app creation
	maxStatusLength     = 50
	maxImageSizeLimit   = 100000 // pixels on the longest side
)

var (
	errInvalidSetting      = errs.New(errs.Invalid, "invalid_setting", "a property has a value of the wrong type or outside its range")
	errSettingOrigin       = errs.New(errs.Invalid, "invalid_origin", "an allowed origin must be an http(s) address with a host and no query or fragment")
	errSettingOAuthUnknown = errs.New(errs.Invalid, "invalid_oauth_provider", "OAuth credentials are set for idp_a or idp_b only")
	languageTag            = regexp.MustCompile(`^[A-Za-z]{2,3}([-_][A-Za-z0-9]{1,8})*$`)
)

// GET /config/app — the application properties (super_admin). OAuth
// secrets are never returned: `client_secret_set` says whether one is in
// force. Values that can also come from the app's configuration file carry
// their source ("settings", "file", or null when unset).
func (s *Server) handleGetAppProperties(c *gin.Context) {
	props, err := appProperties(c.Request.Context(), appOf(c))
	if err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"app": props})
}

// appProperties reads the properties now, merging the settings with the
// configuration file (read on every call).
func appProperties(ctx context.Context, a *apps.App) (gin.H, error) {
	settings, err := a.Settings(ctx)
	if err != nil {
		return nil, err
	}
	creds, err := a.OAuthSettings(ctx)
	if err != nil {
		return nil, err
	}
	stored, err := apps.DecodeOrigins(settings[apps.SettingOAuthAllowedOrigins])
	if err != nil {
		return nil, fmt.Errorf("app %s: setting %s: %w", a.Name, apps.SettingOAuthAllowedOrigins, err)
	}
	origins, err := a.AllowedOrigins(ctx)
	if err != nil {
		return nil, err
	}
	var originsSource any
	switch {
	case len(stored) > 0:
		originsSource = apps.SourceSettings
	case len(origins) > 0:
		originsSource = apps.SourceFile
	}
	oauthOut := gin.H{}
	for _, p := range apps.OAuthProviders {
		o := creds[p]
		oauthOut[p] = gin.H{
			"client_id":            o.ClientID,
			"client_secret_set":    o.ClientSecret != "",
			"configured":           o.Configured(),
			"client_id_source":     nullIfEmpty(o.IDSource),
			"client_secret_source": nullIfEmpty(o.SecretSource),
		}
	}
	var maxImage any
	if n, err := strconv.Atoi(strings.TrimSpace(settings[apps.SettingMaxImageSize])); err == nil && n > 0 {
		maxImage = n
	}
	return gin.H{
		"name":                         a.Name,
		"definition":                   settings[apps.SettingDefinition],
		"status":                       nullIfEmpty(settings[apps.SettingStatus]),
		"language":                     nullIfEmpty(settings[apps.SettingLanguage]),
		"allow_self_registration":      apps.ParseBool(settings[apps.SettingAllowSelfRegistration]),
		"maxImageSize":                 maxImage,
		"oauth_allowed_origins":        origins,
		"oauth_allowed_origins_source": originsSource,
		"oauth":                        oauthOut,
	}, nil
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// PUT /config/app — change some properties (super_admin). Only the keys
// sent change; the body may also be wrapped as {"app":{...}}, the shape GET
// answers with. OAuth credentials go as
// {"oauth":{"idp_a":{"client_id":"…","client_secret":"…"}}}, where an empty
// string clears a value (CONTRACT §8). Everything is validated before
// anything is written, and the write is one transaction.
func (s *Server) handlePutAppProperties(c *gin.Context) {
	var body map[string]json.RawMessage
	if err := bindJSON(c, &body); err != nil {
		s.fail(c, err)
		return
	}
	if inner, ok := body["app"]; ok && len(bytes.TrimSpace(inner)) > 0 && bytes.TrimSpace(inner)[0] == '{' {
		body = nil
		if err := json.Unmarshal(inner, &body); err != nil {
			s.fail(c, errInvalidJSON.With("detail", "app must be an object"))
			return
		}
	}
	a := appOf(c)
	set, unset, err := parseAppProperties(a, body)
	if err != nil {
		s.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	if err := a.UpdateSettings(ctx, set, unset); err != nil {
		s.fail(c, err)
		return
	}
	props, err := appProperties(ctx, a)
	if err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"code": "app_properties_saved", "app": props})
}

// parseAppProperties turns a PUT body into settings to write and settings
// to remove. Unknown keys are ignored (clients echo what GET gave them, the
// read-only `name` and `*_source` keys included).
func parseAppProperties(a *apps.App, body map[string]json.RawMessage) (map[string]string, []string, error) {
	set := map[string]string{}
	var unset []string
	put := func(key, v string) {
		if v == "" {
			unset = append(unset, key)
		} else {
			set[key] = v
		}
	}
	bad := func(key, why string) error {
		return errInvalidSetting.With("setting", key).With("detail", why)
	}

	// definition (alias label): the app's display name; empty means the
	// app's name, as at creation.
	for _, key := range []string{"label", "definition"} { // definition wins when both are sent
		raw, ok := body[key]
		if !ok {
			continue
		}
		v, err := stringValue(raw)
		if err != nil {
			return nil, nil, bad(key, err.Error())
		}
		if len([]rune(v)) > maxDefinitionLength {
			return nil, nil, bad(key, fmt.Sprintf("at most %d characters", maxDefinitionLength))
		}
		if v == "" {
			v = a.Name
		}
		set[apps.SettingDefinition] = v
	}
	if raw, ok := body["status"]; ok {
		v, err := stringValue(raw)
		if err != nil {
			return nil, nil, bad("status", err.Error())
		}
		if len([]rune(v)) > maxStatusLength || strings.ContainsFunc(v, isControl) {
			return nil, nil, bad("status", fmt.Sprintf("one line of at most %d characters", maxStatusLength))
		}
		put(apps.SettingStatus, v)
	}
	if raw, ok := body["language"]; ok {
		v, err := stringValue(raw)
		if err != nil {
			return nil, nil, bad("language", err.Error())
		}
		if v != "" && (len(v) > 35 || !languageTag.MatchString(v)) {
			return nil, nil, bad("language", "a language tag such as en or it")
		}
		put(apps.SettingLanguage, v)
	}
	if raw, ok := body["allow_self_registration"]; ok {
		on, err := boolValue(raw)
		if err != nil {
			return nil, nil, bad("allow_self_registration", err.Error())
		}
		// Off is stored as absent: readers that only test presence
		// (/info/app clients) then see the default.
		if on {
			set[apps.SettingAllowSelfRegistration] = "1"
		} else {
			unset = append(unset, apps.SettingAllowSelfRegistration)
		}
	}
	if raw, ok := body["maxImageSize"]; ok {
		n, err := sizeValue(raw)
		if err != nil {
			return nil, nil, bad("maxImageSize", err.Error())
		}
		if n == 0 {
			unset = append(unset, apps.SettingMaxImageSize)
		} else {
			set[apps.SettingMaxImageSize] = strconv.Itoa(n)
		}
	}
	if raw, ok := body["oauth_allowed_origins"]; ok {
		list, err := originsValue(raw)
		if err != nil {
			return nil, nil, err
		}
		if len(list) == 0 {
			unset = append(unset, apps.SettingOAuthAllowedOrigins)
		} else {
			enc, _ := json.Marshal(list)
			set[apps.SettingOAuthAllowedOrigins] = string(enc)
		}
	}
	if raw, ok := body["oauth"]; ok && !isNull(raw) {
		var providers map[string]map[string]json.RawMessage
		if err := json.Unmarshal(raw, &providers); err != nil {
			return nil, nil, bad("oauth", `an object {"idp_a":{"client_id":"…","client_secret":"…"}}`)
		}
		for p, fields := range providers {
			if !knownOAuthProvider(p) {
				return nil, nil, errSettingOAuthUnknown.With("provider", p)
			}
			for field, key := range map[string]string{"client_id": apps.OAuthClientIDKey(p), "client_secret": apps.OAuthClientSecretKey(p)} {
				raw, ok := fields[field]
				if !ok || isNull(raw) {
					continue // not sent: unchanged
				}
				v, err := stringValue(raw)
				if err != nil {
					return nil, nil, bad("oauth."+p+"."+field, err.Error())
				}
				if strings.ContainsFunc(v, isControl) || len(v) > 1000 {
					return nil, nil, bad("oauth."+p+"."+field, "one line of at most 1000 characters")
				}
				put(key, v)
			}
		}
	}
	return set, unset, nil
}

func knownOAuthProvider(p string) bool {
	for _, k := range apps.OAuthProviders {
		if k == p {
			return true
		}
	}
	return false
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// stringValue reads a JSON string (null is ""), trimmed.
func stringValue(raw json.RawMessage) (string, error) {
	if isNull(raw) {
		return "", nil
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", fmt.Errorf("a string")
	}
	return strings.TrimSpace(v), nil
}

// boolValue reads a flag with the API's liberal rules (wire.Bool); null
// and "" are false.
func boolValue(raw json.RawMessage) (bool, error) {
	var v any
	if err := wire.Decode(raw, &v, wire.Options{}); err != nil || v == nil {
		return false, err
	}
	b, err := wire.Bool(v)
	if err != nil && !errors.Is(err, wire.ErrEmpty) {
		return false, fmt.Errorf("a boolean")
	}
	return b, nil
}

// sizeValue reads maxImageSize: a positive integer (or its string); 0, ""
// and null unset it.
func sizeValue(raw json.RawMessage) (int, error) {
	var v any
	if err := wire.Decode(raw, &v, wire.Options{ExactNumbers: true}); err != nil || v == nil {
		return 0, err
	}
	n64, err := wire.Int(v)
	if errors.Is(err, wire.ErrEmpty) {
		return 0, nil
	}
	if err != nil || n64 > maxImageSizeLimit {
		return 0, fmt.Errorf("an integer")
	}
	n := int(n64)
	if n < 0 || n > maxImageSizeLimit {
		return 0, fmt.Errorf("between 1 and %d pixels, or 0 for no downscaling", maxImageSizeLimit)
	}
	return n, nil
}

// originsValue reads oauth_allowed_origins: a list of strings, or one
// string of origins separated by commas, spaces or new lines (a textarea);
// null is the empty list. Each is normalised the way the OAuth flow
// compares them, and an invalid one is refused by name.
func originsValue(raw json.RawMessage) ([]string, error) {
	var items []string
	if !isNull(raw) {
		var list []string
		var one string
		switch {
		case json.Unmarshal(raw, &list) == nil:
			items = list
		case json.Unmarshal(raw, &one) == nil:
			items = strings.FieldsFunc(one, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\r' || r == '\t' })
		default:
			return nil, errInvalidSetting.With("setting", "oauth_allowed_origins").With("detail", "a list of origins")
		}
	}
	out := []string{}
	seen := map[string]bool{}
	for _, it := range items {
		if strings.TrimSpace(it) == "" {
			continue
		}
		o, ok := oauth.NormalizeOrigin(it)
		if !ok {
			return nil, errSettingOrigin.With("origin", it)
		}
		if !seen[o] {
			seen[o] = true
			out = append(out, o)
		}
	}
	return out, nil
}

// offeredOAuthProviders lists the providers of an app whose credentials are
// both set, in the settings or the configuration file (GET /api/auth/apps).
// A configuration file that cannot be read is logged, and the list falls
// back to the settings alone: one broken file must not hide every app from
// the sign-in page.
func (s *Server) offeredOAuthProviders(ctx context.Context, a *apps.App, settings map[string]string) []string {
	list, err := a.ConfiguredProviders(settings)
	if err != nil {
		s.log.ErrorContext(ctx, "app configuration file unusable", "app", a.Name, "err", err)
		return apps.ConfiguredOAuthProviders(settings)
	}
	return list
}
