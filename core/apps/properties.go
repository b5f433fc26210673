package apps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/strata-archaeo/strata/core/store"
)

// Setting keys of the application properties (GET|PUT /config/app).
const (
	SettingStatus                = "status"
	SettingLanguage              = "language"
	SettingAllowSelfRegistration = "allow_self_registration"
	SettingMaxImageSize          = "maxImageSize"
	// SettingOAuthAllowedOrigins holds a JSON array of normalised origins.
	SettingOAuthAllowedOrigins = "oauth_allowed_origins"
	// SettingOfflineTables holds the tables every device keeps offline by
	// default, a JSON array [{"table", "filter"?}] (PUT /sync/offline-tables).
	SettingOfflineTables = "offline_tables"
)

// Where a property's value comes from.
const (
	SourceSettings = "settings" // sys_settings, edited through PUT /config/app
	SourceFile     = "file"     // the app's configuration file
)

// ConfigFilePath is the optional configuration file of app under the
// instance's data folder: <data-dir>/config/<app>.json, on both engines
// (with PostgreSQL the data folder still holds files, so it exists there
// too). It is kept outside the app's own folder so that it survives
// dropping and re-creating the app, as deployment configuration should.
//
// The file holds the same shape as the body of PUT /config/app:
//
//	{"oauth": {"idp_a": {"client_id": "…", "client_secret": "…"}, "idp_b": {…}},
//	 "oauth_allowed_origins": ["https://dig.example.org"]}
//
// A value set in the database wins over the file's; both are read on every
// request, so editing either takes effect at once.
func ConfigFilePath(dataDir, app string) string {
	return filepath.Join(dataDir, "config", app+".json")
}

// maxConfigFile bounds what is read of a configuration file: a real one is
// a few hundred bytes.
const maxConfigFile = 1 << 20

// SetConfigDir tells the registry the instance's data folder, under which
// its apps' configuration files live (ConfigFilePath). Until it is called
// no file is read and only the settings count. The server calls it once
// when it is built.
func (r *Registry) SetConfigDir(dataDir string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.configDir = dataDir
	for _, a := range r.open {
		a.configFile.Store(ConfigFilePath(dataDir, a.Name))
	}
}

// ConfigFile returns the path of the app's configuration file, or "" when
// the app's registry has no data folder.
func (a *App) ConfigFile() string {
	if v, ok := a.configFile.Load().(string); ok {
		return v
	}
	return ""
}

// OAuthFileCredentials are one provider's credentials in the file.
type OAuthFileCredentials struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
}

// FileConfig is the content of an app's configuration file. Unknown keys
// are ignored.
type FileConfig struct {
	OAuth          map[string]OAuthFileCredentials `json:"oauth"`
	AllowedOrigins []string                        `json:"oauth_allowed_origins"`
}

// ReadConfigFile reads the app's configuration file. A missing file (or no
// data folder) is an empty configuration; a file that cannot be read or
// parsed is an error naming the file, so the operator sees what to fix
// rather than credentials silently missing.
func (a *App) ReadConfigFile() (*FileConfig, error) {
	var fc FileConfig
	path := a.ConfigFile()
	if path == "" {
		return &fc, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &fc, nil
	}
	if err != nil {
		return nil, fmt.Errorf("app %s: read config file: %w", a.Name, err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxConfigFile+1))
	if err != nil {
		return nil, fmt.Errorf("app %s: read config file %s: %w", a.Name, path, err)
	}
	if len(raw) > maxConfigFile {
		return nil, fmt.Errorf("app %s: config file %s is larger than %d bytes", a.Name, path, maxConfigFile)
	}
	if len(strings.TrimSpace(string(raw))) == 0 {
		return &fc, nil
	}
	if err := json.Unmarshal(raw, &fc); err != nil {
		return nil, fmt.Errorf("app %s: config file %s is not valid JSON of the expected shape: %w", a.Name, path, err)
	}
	return &fc, nil
}

// OAuthSetting is one provider's effective credentials, and where each
// value comes from ("" when unset).
type OAuthSetting struct {
	ClientID     string
	ClientSecret string
	IDSource     string
	SecretSource string
}

// Configured reports whether both values are set: only then is the
// provider offered (SPEC §5.5).
func (o OAuthSetting) Configured() bool { return o.ClientID != "" && o.ClientSecret != "" }

// mergeOAuth computes the effective credentials of provider from the
// settings and the file: each value independently, the database first, so
// a deployment may for instance keep the secret in the file and the id in
// the settings.
func mergeOAuth(settings map[string]string, fc *FileConfig, provider string) OAuthSetting {
	var o OAuthSetting
	file := fc.OAuth[provider]
	pick := func(db, fromFile string) (string, string) {
		if v := strings.TrimSpace(db); v != "" {
			return v, SourceSettings
		}
		if v := strings.TrimSpace(fromFile); v != "" {
			return v, SourceFile
		}
		return "", ""
	}
	o.ClientID, o.IDSource = pick(settings[OAuthClientIDKey(provider)], file.ClientID)
	o.ClientSecret, o.SecretSource = pick(settings[OAuthClientSecretKey(provider)], file.ClientSecret)
	return o
}

// OAuthSettings returns the effective credentials of every provider, read
// now from the settings and the configuration file.
func (a *App) OAuthSettings(ctx context.Context) (map[string]OAuthSetting, error) {
	settings, err := a.Settings(ctx)
	if err != nil {
		return nil, err
	}
	return a.oauthSettingsWith(settings)
}

func (a *App) oauthSettingsWith(settings map[string]string) (map[string]OAuthSetting, error) {
	fc, err := a.ReadConfigFile()
	if err != nil {
		return nil, err
	}
	out := make(map[string]OAuthSetting, len(OAuthProviders))
	for _, p := range OAuthProviders {
		out[p] = mergeOAuth(settings, fc, p)
	}
	return out, nil
}

// OAuthCredentials returns the client id and secret of provider for this
// app, from the settings or else the configuration file, read on every
// call. Either may be empty: the provider is configured only when both are
// set.
func (a *App) OAuthCredentials(ctx context.Context, provider string) (clientID, clientSecret string, err error) {
	all, err := a.OAuthSettings(ctx)
	if err != nil {
		return "", "", err
	}
	o := all[provider] // an unknown provider has no credentials
	return o.ClientID, o.ClientSecret, nil
}

// ConfiguredProviders lists, in a fixed order, the providers whose
// effective credentials are both set, given the app's settings already
// read (the file is read now).
func (a *App) ConfiguredProviders(settings map[string]string) ([]string, error) {
	all, err := a.oauthSettingsWith(settings)
	if err != nil {
		return nil, err
	}
	out := []string{}
	for _, p := range OAuthProviders {
		if all[p].Configured() {
			out = append(out, p)
		}
	}
	return out, nil
}

// AllowedOrigins returns the app's own list of allowed client origins
// (CONTRACT §8): the oauth_allowed_origins setting when it holds any, else
// the list in the configuration file. The origins every app allows (the
// request's own, SERVICE_PUBLIC_URL) are the server's to add.
func (a *App) AllowedOrigins(ctx context.Context) ([]string, error) {
	v, _, err := a.Setting(ctx, SettingOAuthAllowedOrigins)
	if err != nil {
		return nil, err
	}
	list, err := DecodeOrigins(v)
	if err != nil {
		return nil, fmt.Errorf("app %s: setting %s: %w", a.Name, SettingOAuthAllowedOrigins, err)
	}
	if len(list) > 0 {
		return list, nil
	}
	fc, err := a.ReadConfigFile()
	if err != nil {
		return nil, err
	}
	return nonEmpty(fc.AllowedOrigins), nil
}

// DecodeOrigins reads the stored form of oauth_allowed_origins: a JSON
// array of strings ("" is the empty list).
func DecodeOrigins(stored string) ([]string, error) {
	if strings.TrimSpace(stored) == "" {
		return []string{}, nil
	}
	var list []string
	if err := json.Unmarshal([]byte(stored), &list); err != nil {
		return nil, err
	}
	return nonEmpty(list), nil
}

func nonEmpty(list []string) []string {
	out := []string{}
	for _, s := range list {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// ParseBool reads a boolean setting: "1", "true", "on" and "yes" (any
// case) are true, anything else false.
func ParseBool(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "on", "yes":
		return true
	}
	return false
}

// SelfRegistrationAllowed reports whether allow_self_registration is on
// (default off, SPEC §5.4).
func (a *App) SelfRegistrationAllowed(ctx context.Context) (bool, error) {
	v, _, err := a.Setting(ctx, SettingAllowSelfRegistration)
	return ParseBool(v), err
}

// Label is how mails and pages name the app: its definition, else its name.
func (a *App) Label(ctx context.Context) (string, error) {
	v, _, err := a.Setting(ctx, SettingDefinition)
	if err != nil {
		return "", err
	}
	if v = strings.TrimSpace(v); v != "" {
		return v, nil
	}
	return a.Name, nil
}

// UpdateSettings writes set and removes unset in one transaction. Removing
// rather than storing "" keeps "not set" one state, which is what readers
// of the settings (ConfiguredOAuthProviders, /info/app) test for.
func (a *App) UpdateSettings(ctx context.Context, set map[string]string, unset []string) error {
	return a.DB.Tx(ctx, func(tx *store.DB) error {
		if len(unset) > 0 {
			if err := tx.Gorm.WithContext(ctx).Where("key IN ?", unset).Delete(&Setting{}).Error; err != nil {
				return fmt.Errorf("remove settings of %s: %w", a.Name, err)
			}
		}
		return setSettings(ctx, tx, a.keys, a.Name, set)
	})
}
